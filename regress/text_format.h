// Signed numbers, p-values, durations and metrics for the diff and check
// renderers. Plain numbers, percentages, sizes and escaping per format come
// from common/text.h.
#pragma once

#include <optional>
#include <string>

#include "trace_formats/common/text.h"

namespace gpuscope::regress::fmt {

std::string signed_fixed(double v, int decimals);  // "+1.250", "-0.300", "0.000"
std::string signed_percent(double fraction, int decimals = 1);  // 0.124 -> "+12.4 %"
std::string optional_percent(const std::optional<double>& fraction);  // "" when absent
std::string signed_bytes(double b);                // "+1.50 GB"
std::string p_value(double p);                     // "0.031", "< 0.0001"
std::string p_is(double p);                        // "= 0.031", "< 0.0001"
std::string duration(double ms);                   // "12.345 ms", "13.25 us", "310 ns": readable at any scale
std::string metric(double v, const std::string& unit);  // by unit: ms, bytes, fraction, count

}  // namespace gpuscope::regress::fmt
