// strataQuantOptionsParse: the spec grammar of STRATA_QUANT, offered to callers who build options from text.
#include <cstring>

#include "api/comm_handle.h"
#include "exec/quant/quant_spec.h"

extern "C" strataResult_t strataQuantOptionsParse(const char* spec, strataQuantOptions_t* options) {
  using strata::MakeError;
  using strata::ReturnStatus;
  if (spec == nullptr) return ReturnStatus(MakeError(strataInvalidArgument, "quantization spec is NULL"));
  if (options == nullptr) return ReturnStatus(MakeError(strataInvalidArgument, "quantization options pointer is NULL"));
  if (options->magic != STRATA_QUANT_OPTIONS_MAGIC || options->size < sizeof(strataQuantOptions_t)) {
    return ReturnStatus(MakeError(strataInvalidArgument,
                                  "quantization options not initialized with STRATA_QUANT_OPTIONS_INITIALIZER"));
  }
  strata::QuantSpec parsed;
  const strata::Status st = strata::ParseQuantSpec(std::string(spec, strnlen(spec, 4096)), &parsed);
  if (!st.ok()) return ReturnStatus(st);
  strata::QuantOptionsFromSpec(parsed, options);
  return strataSuccess;
}
