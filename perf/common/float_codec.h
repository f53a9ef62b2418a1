// Conversions between double and the narrow float formats, written for the checker so that it does not
// share a line with the library's own conversion code. Round to nearest, ties to even, subnormals kept.
#pragma once

#include <cstdint>

#include "strata/strata.h"

namespace strata::perf {

// `type` is strataFloat16, strataBfloat16, strataFloat8e4m3 or strataFloat8e5m2. Values past the largest
// finite one become infinity (NaN for e4m3, which has no infinity).
uint32_t EncodeNarrowFloat(strataDataType_t type, double value);
double DecodeNarrowFloat(strataDataType_t type, uint32_t bits);

}  // namespace strata::perf
