#include "tensor_types.h"

namespace strata_torch {

strataDataType_t StrataType(at::ScalarType type, const char* collective) {
  switch (type) {
    case at::kFloat: return strataFloat32;
    case at::kDouble: return strataFloat64;
    case at::kHalf: return strataFloat16;
    case at::kBFloat16: return strataBfloat16;
    case at::kChar: return strataInt8;
    case at::kByte: return strataUint8;
    case at::kBool: return strataUint8;  // 0 or 1 per byte: min and max are and and or
    case at::kInt: return strataInt32;
    case at::kLong: return strataInt64;
#if STRATA_TORCH_AT_LEAST(2, 1)
    case at::kFloat8_e4m3fn: return strataFloat8e4m3;
    case at::kFloat8_e5m2: return strataFloat8e5m2;
#endif
#if STRATA_TORCH_AT_LEAST(2, 3)
    case at::kUInt32: return strataUint32;
    case at::kUInt64: return strataUint64;
#endif
    default:
      TORCH_CHECK(false, "strata ", collective, ": dtype ", c10::toString(type),
                  " is not supported (float32, float64, float16, bfloat16, int8, uint8, bool, int32, int64)");
  }
}

strataRedOp_t StrataOp(const c10d::ReduceOp& op, at::ScalarType type, const char* collective) {
  const bool isBool = type == at::kBool;
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      if (isBool) return strataMax;  // torch sums bools as a logical or
      return strataSum;
    case c10d::ReduceOp::PRODUCT:
      if (isBool) return strataMin;  // logical and
      return strataProd;
    case c10d::ReduceOp::MIN: return strataMin;
    case c10d::ReduceOp::MAX: return strataMax;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(!isBool, "strata ", collective, ": ReduceOp.AVG is not defined for bool tensors");
      return strataAvg;
    case c10d::ReduceOp::BAND:
      if (isBool) return strataMin;
      break;
    case c10d::ReduceOp::BOR:
      if (isBool) return strataMax;
      break;
    default: break;
  }
  TORCH_CHECK(false, "strata ", collective, ": reduce op ", static_cast<int>(op.op_), " on ", c10::toString(type),
              " is not supported (SUM, PRODUCT, MIN, MAX, AVG; BAND and BOR on bool only)");
}

void CheckTensor(const at::Tensor& t, const char* collective) {
  TORCH_CHECK(t.defined(), "strata ", collective, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "strata ", collective, ": tensors must be on the CPU (got one on ", t.device(),
              ")");
  TORCH_CHECK(t.layout() == at::kStrided, "strata ", collective, ": sparse tensors are not supported");
  TORCH_CHECK(t.is_contiguous(), "strata ", collective, ": tensors must be contiguous (call .contiguous() first)");
}

const at::Tensor& SingleTensor(const std::vector<at::Tensor>& tensors, const char* collective) {
  TORCH_CHECK(tensors.size() == 1, "strata ", collective, ": expected one tensor per call, got ", tensors.size());
  CheckTensor(tensors[0], collective);
  return tensors[0];
}

void CheckSameShape(const std::vector<at::Tensor>& tensors, const at::Tensor& like, const char* collective) {
  for (const at::Tensor& t : tensors) {
    CheckTensor(t, collective);
    TORCH_CHECK(t.scalar_type() == like.scalar_type(), "strata ", collective, ": dtypes differ (",
                c10::toString(t.scalar_type()), " and ", c10::toString(like.scalar_type()), ")");
    TORCH_CHECK(t.numel() == like.numel(), "strata ", collective, ": tensor sizes differ (", t.numel(), " and ",
                like.numel(), " elements)");
  }
}

}  // namespace strata_torch
