// torch tensors, dtypes and reduce ops as strata sees them. Every check throws a c10::Error (a Python
// RuntimeError) that names the collective, before anything is queued.
#pragma once

#include <strata/strata.h>

#include <vector>

#include "torch_compat.h"

namespace strata_torch {

// strata's datatype for a torch dtype; throws for dtypes strata has no type for.
strataDataType_t StrataType(at::ScalarType type, const char* collective);
// strata's op for a reduce op on a dtype; throws for BAND/BOR/BXOR (except on bool), PREMUL_SUM, and
// AVG on bool.
strataRedOp_t StrataOp(const c10d::ReduceOp& op, at::ScalarType type, const char* collective);

// A tensor strata can read or write in place: on the CPU, strided and contiguous.
void CheckTensor(const at::Tensor& t, const char* collective);
// Exactly one tensor (the CPU form of the per-device tensor lists), checked.
const at::Tensor& SingleTensor(const std::vector<at::Tensor>& tensors, const char* collective);
// Every tensor checked, with the dtype and number of elements of `like`.
void CheckSameShape(const std::vector<at::Tensor>& tensors, const at::Tensor& like, const char* collective);

}  // namespace strata_torch
