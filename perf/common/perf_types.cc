#include "perf_types.h"

#include <strings.h>

#include <cmath>
#include <cstdlib>
#include <iterator>

namespace strata::perf {
namespace {

// Float rows: precision and smallest normal exponent of IEEE half/float/double, bfloat16 and the two
// OCP fp8 formats (e4m3 is the "fn" variant: no infinities, max 448).
const TypeDesc kTypes[] = {
    {strataInt8, "int8", 1, TypeClass::kSigned, 0, 0},
    {strataUint8, "uint8", 1, TypeClass::kUnsigned, 0, 0},
    {strataInt32, "int32", 4, TypeClass::kSigned, 0, 0},
    {strataUint32, "uint32", 4, TypeClass::kUnsigned, 0, 0},
    {strataInt64, "int64", 8, TypeClass::kSigned, 0, 0},
    {strataUint64, "uint64", 8, TypeClass::kUnsigned, 0, 0},
    {strataFloat16, "half", 2, TypeClass::kFloat, 11, -14},
    {strataFloat32, "float", 4, TypeClass::kFloat, 24, -126},
    {strataFloat64, "double", 8, TypeClass::kFloat, 53, -1022},
    {strataBfloat16, "bfloat16", 2, TypeClass::kFloat, 8, -126},
    {strataFloat8e4m3, "f8e4m3", 1, TypeClass::kFloat, 4, -6},
    {strataFloat8e5m2, "f8e5m2", 1, TypeClass::kFloat, 3, -14},
};

struct TypeAlias {
  const char* name;
  strataDataType_t type;
};
const TypeAlias kTypeAliases[] = {
    {"char", strataInt8},          {"int", strataInt32},          {"fp16", strataFloat16},
    {"float16", strataFloat16},    {"fp32", strataFloat32},       {"float32", strataFloat32},
    {"fp64", strataFloat64},       {"float64", strataFloat64},    {"bf16", strataBfloat16},
    {"e4m3", strataFloat8e4m3},    {"fp8e4m3", strataFloat8e4m3}, {"e5m2", strataFloat8e5m2},
    {"fp8e5m2", strataFloat8e5m2},
};

const strataRedOp_t kOps[] = {strataSum, strataProd, strataMax, strataMin, strataAvg};
const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

}  // namespace

const TypeDesc* AllTypes(size_t* n) {
  *n = std::size(kTypes);
  return kTypes;
}

const TypeDesc& GetTypeDesc(strataDataType_t type) {
  for (const TypeDesc& t : kTypes) {
    if (t.type == type) return t;
  }
  std::abort();  // every strataDataType_t value is in the table
}

bool ParseTypeName(const std::string& name, strataDataType_t* type) {
  for (const TypeDesc& t : kTypes) {
    if (strcasecmp(name.c_str(), t.name) == 0) {
      *type = t.type;
      return true;
    }
  }
  for (const TypeAlias& a : kTypeAliases) {
    if (strcasecmp(name.c_str(), a.name) == 0) {
      *type = a.type;
      return true;
    }
  }
  return false;
}

const strataRedOp_t* AllOps(size_t* n) {
  *n = std::size(kOps);
  return kOps;
}

const char* OpName(strataRedOp_t op) { return op >= 0 && op < strataNumOps ? kOpNames[op] : "?"; }

bool ParseOpName(const std::string& name, strataRedOp_t* op) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (strcasecmp(name.c_str(), kOpNames[i]) == 0) {
      *op = kOps[i];
      return true;
    }
  }
  return false;
}

double ExactIntegerLimit(const TypeDesc& type) { return std::ldexp(1.0, type.precision); }

}  // namespace strata::perf
