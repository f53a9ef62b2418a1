/*
 * strata: collective communication for host and GPU memory.
 *
 * The public C ABI. Numeric values of datatypes, reduction ops and result codes are NCCL's, so a
 * caller (or the NCCL ABI library) maps one onto the other without a table.
 */
#ifndef STRATA_STRATA_H_
#define STRATA_STRATA_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STRATA_MAJOR 0
#define STRATA_MINOR 1
#define STRATA_PATCH 2
#define STRATA_VERSION_CODE(X, Y, Z) ((X) * 10000 + (Y) * 100 + (Z))
#define STRATA_VERSION STRATA_VERSION_CODE(STRATA_MAJOR, STRATA_MINOR, STRATA_PATCH)

typedef struct strataComm* strataComm_t;
/* Opaque; a stream argument is accepted for NCCL compatibility and ignored for host buffers. */
typedef void* strataStream_t;

#define STRATA_UNIQUE_ID_BYTES 128
/* Carries the root's address and a random secret; pass it to every rank out of band. */
typedef struct {
  char internal[STRATA_UNIQUE_ID_BYTES];
} strataUniqueId;

typedef enum {
  strataSuccess = 0,
  strataUnhandledCudaError = 1,
  strataSystemError = 2,
  strataInternalError = 3,
  strataInvalidArgument = 4,
  strataInvalidUsage = 5,
  strataRemoteError = 6,
  strataInProgress = 7,
  /* strata's own codes start above NCCL's range. */
  strataTimeout = 16,
  strataCommAborted = 17,
  strataNumResults = 18
} strataResult_t;

typedef enum {
  strataInt8 = 0,
  strataChar = 0,
  strataUint8 = 1,
  strataInt32 = 2,
  strataInt = 2,
  strataUint32 = 3,
  strataInt64 = 4,
  strataUint64 = 5,
  strataFloat16 = 6,
  strataHalf = 6,
  strataFloat32 = 7,
  strataFloat = 7,
  strataFloat64 = 8,
  strataDouble = 8,
  strataBfloat16 = 9,
  strataFloat8e4m3 = 10,
  strataFloat8e5m2 = 11,
  strataNumTypes = 12
} strataDataType_t;

typedef enum { strataSum = 0, strataProd = 1, strataMax = 2, strataMin = 3, strataAvg = 4, strataNumOps = 5 } strataRedOp_t;

#define STRATA_CONFIG_UNDEF_INT INT_MIN
#define STRATA_CONFIG_UNDEF_PTR NULL
#define STRATA_CONFIG_MAGIC 0x57a7a001u

/* Versioned like ncclConfig_t: fields are only ever appended; `size` tells which ones a caller has. */
typedef struct strataConfig_v1 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;          /* accepted for NCCL compatibility; host calls always block */
  const char* commName;  /* shown in log lines */
  int timeoutMs;         /* bound on init and on every wait; overrides STRATA_TIMEOUT */
  int nChannels;         /* ring channels; overrides STRATA_NCHANNELS */
  int shmDisable;        /* 1: use TCP even between ranks of one host; overrides STRATA_SHM_DISABLE */
  int nSocketsPerPeer;   /* TCP sockets per peer and channel; overrides STRATA_NSOCKS_PERPEER */
  /* Added in 0.1.1. */
  const char* algorithm; /* forced algorithms in STRATA_ALGO's syntax ("allreduce:ring;broadcast:tree", or a bare
                            name such as "tree"); replaces STRATA_ALGO for this communicator; docs/ALGORITHMS.md */
  /* Added in 0.1.2. */
  const char* quant;     /* quantization spec in STRATA_QUANT's grammar ("int8:128", "none") for every eligible
                            AllReduce, ReduceScatter and AllGather of this communicator; replaces STRATA_QUANT;
                            docs/QUANTIZATION.md */
} strataConfig_t;

#define STRATA_CONFIG_INITIALIZER                                                                     \
  {                                                                                                   \
    sizeof(strataConfig_t), STRATA_CONFIG_MAGIC, STRATA_VERSION, STRATA_CONFIG_UNDEF_INT,             \
        STRATA_CONFIG_UNDEF_PTR, STRATA_CONFIG_UNDEF_INT, STRATA_CONFIG_UNDEF_INT, STRATA_CONFIG_UNDEF_INT, \
        STRATA_CONFIG_UNDEF_INT, STRATA_CONFIG_UNDEF_PTR, STRATA_CONFIG_UNDEF_PTR                     \
  }

#define STRATA_SPLIT_NOCOLOR (-1)

/* Version, errors. */
strataResult_t strataGetVersion(int* version);
const char* strataGetErrorString(strataResult_t result);
/* The reason for the last error returned on the calling thread ("" when none). */
const char* strataGetLastError(strataComm_t comm);

/* Communicator life cycle. */
strataResult_t strataGetUniqueId(strataUniqueId* uniqueId);
strataResult_t strataCommInitRank(strataComm_t* comm, int nranks, strataUniqueId commId, int rank);
strataResult_t strataCommInitRankConfig(strataComm_t* comm, int nranks, strataUniqueId commId, int rank,
                                        strataConfig_t* config);
/* Rank, size and rendezvous from the launcher's environment: STRATA_RANK/STRATA_NRANKS/STRATA_ROOT_ADDR,
 * torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, Open MPI's OMPI_COMM_WORLD_*, Slurm's SLURM_*. */
strataResult_t strataCommInitFromEnv(strataComm_t* comm, strataConfig_t* config);
strataResult_t strataCommSplit(strataComm_t comm, int color, int key, strataComm_t* newcomm, strataConfig_t* config);
strataResult_t strataCommDestroy(strataComm_t comm);
strataResult_t strataCommAbort(strataComm_t comm);
strataResult_t strataCommCount(const strataComm_t comm, int* count);
strataResult_t strataCommUserRank(const strataComm_t comm, int* rank);
strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError);
/* The name of the algorithm the communicator's last collective ran ("ring", "tree", "rd", ..., "local" on one rank;
 * "" before the first collective). The string lives as long as the communicator. */
strataResult_t strataCommGetLastAlgorithm(strataComm_t comm, const char** name);

/* Host memory that the ranks of one host map into each other (a memfd per buffer, mapped shared). Any buffer works
 * with every call; one from strataMemAlloc lets the in-place algorithms (oneshot, twoshot) on one host load and store
 * it directly, where other buffers pay cross-memory attach's page pinning on every call. strataMemFree takes only a
 * pointer strataMemAlloc gave (NULL is accepted and ignored). */
strataResult_t strataMemAlloc(void** ptr, size_t size);
strataResult_t strataMemFree(void* ptr);

/* Collectives. Host buffers: each call blocks until the result is in place. */
strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                               strataRedOp_t op, strataComm_t comm, strataStream_t stream);
strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype, int root,
                               strataComm_t comm, strataStream_t stream);
strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, int root, strataComm_t comm, strataStream_t stream);
/* sendcount elements from each rank; recvbuff holds nranks * sendcount. */
strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                               strataComm_t comm, strataStream_t stream);
/* sendbuff holds nranks * recvcount; each rank receives its recvcount-element block of the reduction. */
strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                                   strataRedOp_t op, strataComm_t comm, strataStream_t stream);
/* count elements to and from every rank; each buffer holds nranks * count. */
strataResult_t strataAlltoAll(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                              strataComm_t comm, strataStream_t stream);
strataResult_t strataSend(const void* sendbuff, size_t count, strataDataType_t datatype, int peer, strataComm_t comm,
                          strataStream_t stream);
strataResult_t strataRecv(void* recvbuff, size_t count, strataDataType_t datatype, int peer, strataComm_t comm,
                          strataStream_t stream);
strataResult_t strataBarrier(strataComm_t comm);

/* Calls between GroupStart and GroupEnd run together at GroupEnd (send/recv pairs never deadlock). */
strataResult_t strataGroupStart(void);
strataResult_t strataGroupEnd(void);

/* Quantized collectives (docs/QUANTIZATION.md): sum/avg of fp32, fp16 and bf16 sent in a narrower format with one
 * scale per block of elements. */
typedef enum {
  strataQuantNone = 0, /* exact */
  strataQuantBf16 = 1,
  strataQuantFp16 = 2,
  strataQuantFp8e4m3 = 3,
  strataQuantFp8e5m2 = 4,
  strataQuantInt8 = 5,
  strataQuantInt4 = 6,
  strataQuantNumFormats = 7
} strataQuantFormat_t;
typedef enum { strataQuantScaleFp32 = 0, strataQuantScaleFp16 = 1 } strataQuantScale_t;
typedef enum { strataQuantRoundNearest = 0, strataQuantRoundStochastic = 1 } strataQuantRounding_t;

#define STRATA_QUANT_OPTIONS_MAGIC 0x57a7a0a1u

/* Versioned like strataConfig_t: fields are only ever appended; `size` tells which ones a caller has. */
typedef struct strataQuantOptions_v1 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int format;              /* strataQuantFormat_t */
  int blockSize;           /* elements per scale: a multiple of 32 from 32 to 4096 */
  int scaleFormat;         /* strataQuantScale_t (ignored by bf16 and fp16, which carry no scale) */
  int rounding;            /* strataQuantRounding_t */
  unsigned long long seed; /* stochastic rounding: same seed and inputs, same bytes */
} strataQuantOptions_t;

#define STRATA_QUANT_OPTIONS_INITIALIZER                                                                  \
  {                                                                                                       \
    sizeof(strataQuantOptions_t), STRATA_QUANT_OPTIONS_MAGIC, STRATA_VERSION, strataQuantNone, 128,       \
        strataQuantScaleFp32, strataQuantRoundNearest, 0ull                                               \
  }

/* Parses a spec in STRATA_QUANT's grammar ("int8:128", "int4:32:fp16", "fp8e4m3:64:fp32:stochastic:42",
 * "none") into *options (which must hold STRATA_QUANT_OPTIONS_INITIALIZER's size and magic); on a malformed
 * spec returns strataInvalidArgument, leaves *options alone and says why in strataGetLastError(). */
strataResult_t strataQuantOptionsParse(const char* spec, strataQuantOptions_t* options);

/* The collectives with a quantization spec for this call. quant == NULL: the communicator's spec (config field
 * `quant`, else STRATA_QUANT), as the plain calls do; a strataQuantNone spec: exact. A spec given here applies at
 * any size and on any link, and a call it cannot apply to (a datatype other than fp32/fp16/bf16, an op other than
 * sum/avg) fails with strataInvalidArgument. Every rank must pass the same spec, as it passes the same count. */
strataResult_t strataAllReduceEx(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                                 strataRedOp_t op, strataComm_t comm, strataStream_t stream,
                                 const strataQuantOptions_t* quant);
strataResult_t strataReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount,
                                     strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                     strataStream_t stream, const strataQuantOptions_t* quant);
strataResult_t strataAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                                 strataComm_t comm, strataStream_t stream, const strataQuantOptions_t* quant);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_STRATA_H_ */
