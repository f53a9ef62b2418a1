// strata's datatypes and reduction ops as the perf tools name, parse and reason about them.
#pragma once

#include <cstddef>
#include <string>

#include "strata/strata.h"

namespace strata::perf {

enum class TypeClass { kSigned, kUnsigned, kFloat };

struct TypeDesc {
  strataDataType_t type;
  const char* name;  // nccl-tests' spelling, printed in the type column
  size_t size;       // bytes per element
  TypeClass cls;
  // Float formats only: significand bits including the implicit one, and the exponent of the smallest
  // normal number. They size the rounding bounds of the checker.
  int precision;
  int minExponent;
};

// Every datatype in the order `-d all` runs them.
const TypeDesc* AllTypes(size_t* n);
const TypeDesc& GetTypeDesc(strataDataType_t type);
// nccl-tests' names plus the aliases fp16, bf16, fp32, fp64, int, char, ...; false when unknown.
bool ParseTypeName(const std::string& name, strataDataType_t* type);

// Every reduction op in the order `-o all` runs them.
const strataRedOp_t* AllOps(size_t* n);
const char* OpName(strataRedOp_t op);
bool ParseOpName(const std::string& name, strataRedOp_t* op);

// The largest M such that every integer in [-M, M] is exact in a float type (2^precision).
double ExactIntegerLimit(const TypeDesc& type);

}  // namespace strata::perf
