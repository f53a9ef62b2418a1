// Collective and point-to-point entry points: argument checks, then a CollDesc for the
// communicator (or the current group).
#include <cstddef>
#include <cstdint>

#include "api/group.h"
#include "core/call_check.h"
#include "exec/host_reduce.h"
#include "exec/quant/quant_spec.h"

namespace strata {
namespace {

Status CheckType(strataDataType_t t) {
  STRATA_REQUIRE(static_cast<int>(t) >= 0 && t < strataNumTypes, strataInvalidArgument,
                 "unknown datatype %d (valid: 0-%d)", static_cast<int>(t), strataNumTypes - 1);
  return Status::Ok();
}

Status CheckOp(strataRedOp_t op) {
  STRATA_REQUIRE(static_cast<int>(op) >= 0 && op < strataNumOps, strataInvalidArgument,
                 "unknown reduction op %d (valid: 0-%d)", static_cast<int>(op), strataNumOps - 1);
  return Status::Ok();
}

// `elems` elements of `t` times `factor` must fit one buffer: at most PTRDIFF_MAX bytes, half the address space (a
// negative count passed from C arrives as a count above that).
Status CheckSize(size_t elems, strataDataType_t t, int factor, const char* what) {
  const size_t esize = DataTypeSize(t);
  constexpr size_t kMaxBytes = PTRDIFF_MAX;
  STRATA_REQUIRE(elems <= kMaxBytes / esize / static_cast<size_t>(factor), strataInvalidArgument,
                 "%s of %zu elements x %d x %zu bytes overflows the address space (a buffer holds at most %zu bytes; "
                 "a negative count?)",
                 what, elems, factor, esize, kMaxBytes);
  return Status::Ok();
}

// The buffers of a call may be one and the same only in the in-place forms NCCL defines: `send` == `recv` (allreduce,
// broadcast, reduce), `send` at rank `me`'s block of `recv` (allgather), `recv` at `me`'s block of `send`
// (reduce-scatter); AlltoAll only on one rank. Any other overlap would have the call overwrite input it has not read
// yet.
Status CheckOverlap(CollKind kind, const void* send, size_t sendBytes, const void* recv, size_t recvBytes,
                    size_t blockBytes, int me, int nranks) {
  const uintptr_t s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
  if (sendBytes == 0 || recvBytes == 0 || s + sendBytes <= r || r + recvBytes <= s) return Status::Ok();
  const size_t myBlock = blockBytes * static_cast<size_t>(me);
  bool inPlace = false;
  switch (kind) {
    case CollKind::AllGather:
      inPlace = s == r + myBlock;
      break;
    case CollKind::ReduceScatter:
      inPlace = r == s + myBlock;
      break;
    case CollKind::AlltoAll:
      inPlace = nranks == 1 && s == r;
      break;  // one rank: a copy onto itself
    default:
      inPlace = s == r;
      break;
  }
  if (inPlace) return Status::Ok();
  if (kind == CollKind::AlltoAll)
    return MakeError(strataInvalidArgument,
                     "AlltoAll cannot run in place: sendbuff and recvbuff overlap (recvbuff %+td bytes from sendbuff); "
                     "use separate buffers",
                     static_cast<ptrdiff_t>(r - s));
  const char* form = kind == CollKind::AllGather       ? "sendbuff == recvbuff + rank * sendcount"
                     : kind == CollKind::ReduceScatter ? "recvbuff == sendbuff + rank * recvcount"
                                                       : "sendbuff == recvbuff";
  return MakeError(strataInvalidArgument,
                   "%s: sendbuff and recvbuff overlap (recvbuff %+td bytes from sendbuff) but are not in place; in "
                   "place means %s, otherwise the buffers must not overlap",
                   CollKindName(kind), static_cast<ptrdiff_t>(r - s), form);
}

Status CheckBuffer(const void* p, size_t count, const char* name) {
  STRATA_REQUIRE(p != nullptr || count == 0, strataInvalidArgument, "%s is NULL with a count of %zu", name, count);
  return Status::Ok();
}

Status CheckRoot(int root, int nranks, const char* what) {
  STRATA_REQUIRE(root >= 0 && root < nranks, strataInvalidArgument, "%s %d is out of range for %d ranks", what, root,
                 nranks);
  return Status::Ok();
}

Status Submit(strataComm* comm, CommGuard& c, const CollDesc& desc, const void* send, void* recv,
              const QuantSpec* quant) {
  if (InGroup()) {
    GroupAddCollective(comm, desc, send, recv, quant);
    return Status::Ok();
  }
  return c->runCollective(desc, send, recv, quant);
}

// `options`: an Ex call's quantization options (NULL: the communicator's spec applies).
Status Collective(CollKind kind, const void* send, void* recv, size_t count, strataDataType_t type, strataRedOp_t op,
                  int root, strataComm* comm, const strataQuantOptions_t* options = nullptr) {
  CommGuard c(comm, InGroup() ? CommGuard::kQuery : CommGuard::kMovesData);
  STRATA_CHECK(c.status());
  QuantSpec quant;
  if (options) {
    Status st = QuantSpecFromOptions(options, &quant);
    if (!st.ok()) return MakeError(st.code(), "%s quantization options: %s", CollKindName(kind), st.message().c_str());
  }
  STRATA_CHECK(CheckType(type));
  const bool reduces = kind == CollKind::AllReduce || kind == CollKind::Reduce || kind == CollKind::ReduceScatter;
  if (reduces) STRATA_CHECK(CheckOp(op));
  const int n = c->nranks(), me = c->rank();
  const bool rooted = kind == CollKind::Broadcast || kind == CollKind::Reduce;
  if (rooted) STRATA_CHECK(CheckRoot(root, n, "root"));
  // Which buffer holds how many elements on this rank.
  size_t sendElems = count, recvElems = count;
  int factor = 1;
  switch (kind) {
    case CollKind::AllGather: recvElems = count * n; factor = n; break;
    case CollKind::ReduceScatter: sendElems = count * n; factor = n; break;
    case CollKind::AlltoAll: sendElems = recvElems = count * n; factor = n; break;
    case CollKind::Broadcast: if (me != root) sendElems = 0; break;
    case CollKind::Reduce: if (me != root) recvElems = 0; break;
    default: break;
  }
  STRATA_CHECK(CheckSize(count, type, factor, CollKindName(kind)));
  STRATA_CHECK(CheckBuffer(send, sendElems, "sendbuff"));
  STRATA_CHECK(CheckBuffer(recv, recvElems, "recvbuff"));
  const size_t esize = DataTypeSize(type);
  STRATA_CHECK(CheckOverlap(kind, send, sendElems * esize, recv, recvElems * esize, count * esize, me, n));
  CollDesc desc;
  desc.kind = kind;
  desc.count = count;
  desc.dtype = type;
  desc.op = reduces ? op : strataSum;
  desc.root = rooted ? root : 0;
  // A call's own spec is checked here, so that an ineligible one fails before anything is queued.
  if (options && quant.enabled && !QuantEligible(type, desc.op))
    return MakeError(strataInvalidArgument,
                     "%s with quantization %s: only sum and avg of float32, float16 and bfloat16 can be quantized "
                     "(got datatype %s, op %s)",
                     CollKindName(kind), QuantSpecString(quant).c_str(), DataTypeName(type), RedOpName(desc.op));
  return Submit(comm, c, desc, send, recv, options ? &quant : nullptr);
}

Status PointToPoint(bool isSend, void* buf, size_t count, strataDataType_t type, int peer, strataComm* comm) {
  CommGuard c(comm, InGroup() ? CommGuard::kQuery : CommGuard::kMovesData);
  STRATA_CHECK(c.status());
  STRATA_CHECK(CheckType(type));
  STRATA_CHECK(CheckRoot(peer, c->nranks(), "peer"));
  STRATA_CHECK(CheckSize(count, type, 1, isSend ? "Send" : "Recv"));
  STRATA_CHECK(CheckBuffer(buf, count, isSend ? "sendbuff" : "recvbuff"));
  P2POp op{isSend, peer, buf, count, type};
  if (InGroup()) {
    GroupAddP2P(comm, op);
    return Status::Ok();
  }
  return c->runP2P({op});
}

// A one-element allreduce. In a group it runs at strataGroupEnd, in call order, on buffers of the group's: this
// frame's would be gone by then.
Status Barrier(strataComm* comm) {
  int32_t in = 0, out = 0;
  if (!InGroup()) return Collective(CollKind::AllReduce, &in, &out, 1, strataInt32, strataSum, 0, comm);
  CommGuard c(comm);
  STRATA_CHECK(c.status());
  CollDesc desc;
  desc.kind = CollKind::AllReduce;
  desc.count = 1;
  desc.dtype = strataInt32;
  desc.op = strataSum;
  GroupAddBarrier(comm, desc);
  return Status::Ok();
}

}  // namespace
}  // namespace strata

using strata::CollKind;
using strata::ReturnStatus;

extern "C" {

strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                               strataRedOp_t op, strataComm_t comm, strataStream_t) {
  return ReturnStatus(strata::Collective(CollKind::AllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm));
}

strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype, int root,
                               strataComm_t comm, strataStream_t) {
  return ReturnStatus(
      strata::Collective(CollKind::Broadcast, sendbuff, recvbuff, count, datatype, strataSum, root, comm));
}

strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                            strataRedOp_t op, int root, strataComm_t comm, strataStream_t) {
  return ReturnStatus(strata::Collective(CollKind::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm));
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                               strataComm_t comm, strataStream_t) {
  return ReturnStatus(
      strata::Collective(CollKind::AllGather, sendbuff, recvbuff, sendcount, datatype, strataSum, 0, comm));
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                                   strataRedOp_t op, strataComm_t comm, strataStream_t) {
  return ReturnStatus(
      strata::Collective(CollKind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm));
}

strataResult_t strataAllReduceEx(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                                 strataRedOp_t op, strataComm_t comm, strataStream_t, const strataQuantOptions_t* quant) {
  return ReturnStatus(
      strata::Collective(CollKind::AllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm, quant));
}

strataResult_t strataReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount, strataDataType_t datatype,
                                     strataRedOp_t op, strataComm_t comm, strataStream_t,
                                     const strataQuantOptions_t* quant) {
  return ReturnStatus(
      strata::Collective(CollKind::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, quant));
}

strataResult_t strataAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount, strataDataType_t datatype,
                                 strataComm_t comm, strataStream_t, const strataQuantOptions_t* quant) {
  return ReturnStatus(
      strata::Collective(CollKind::AllGather, sendbuff, recvbuff, sendcount, datatype, strataSum, 0, comm, quant));
}

strataResult_t strataAlltoAll(const void* sendbuff, void* recvbuff, size_t count, strataDataType_t datatype,
                              strataComm_t comm, strataStream_t) {
  return ReturnStatus(
      strata::Collective(CollKind::AlltoAll, sendbuff, recvbuff, count, datatype, strataSum, 0, comm));
}

strataResult_t strataSend(const void* sendbuff, size_t count, strataDataType_t datatype, int peer, strataComm_t comm,
                          strataStream_t) {
  return ReturnStatus(strata::PointToPoint(true, const_cast<void*>(sendbuff), count, datatype, peer, comm));
}

strataResult_t strataRecv(void* recvbuff, size_t count, strataDataType_t datatype, int peer, strataComm_t comm,
                          strataStream_t) {
  return ReturnStatus(strata::PointToPoint(false, recvbuff, count, datatype, peer, comm));
}

strataResult_t strataBarrier(strataComm_t comm) { return ReturnStatus(strata::Barrier(comm)); }

}  // extern "C"
