// Numbers and times as every report prints them: analyze's reports and
// diff's and check's alike. Plain numbers, percentages, sizes and escaping per
// format come from common/text.h, which this header brings along.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_formats/common/text.h"

namespace gpuscope::report {

// ---- times

std::string ms(int64_t ns);            // "12.345" (no unit)
std::string ms_unit(double ms_value);  // "12.345 ms"
std::string seconds(int64_t ns);       // "1.234567 s", for time ranges
std::string duration(double ms);       // "12.345 ms", "13.25 us", "310 ns": readable at any scale

// ---- changes

// The sign follows the value as printed, so a change that rounds to nothing
// has none: "+1.250", "-0.300", "0.000"; "n/a" when not finite.
std::string signed_fixed(double v, int decimals);
std::string signed_percent(double fraction, int decimals = 1);        // 0.124 -> "+12.4 %"
std::string optional_percent(const std::optional<double>& fraction);  // "" when absent
std::string signed_bytes(double b);                                   // "+1.50 GB"
// A value already in percent, "+" on any value >= 0 before rounding, as
// analyze has always printed its tracing cost: "+22.7 %", "+0.0 %", "-3.1 %".
std::string plus_percent(double pct, int decimals = 1);

// ---- statistics

std::string p_value(double p);                          // "0.031", "< 0.0001"
std::string p_is(double p);                             // "= 0.031", "< 0.0001"
std::string metric(double v, const std::string& unit);  // by unit: ms, bytes, fraction, count

// ---- terminal columns

// `s` padded with spaces to `width` bytes, never cut. Bytes are close enough:
// the terminal reports put names, the only wide text, last on a line.
std::string pad(const std::string& s, size_t width);   // "ab  "
std::string lpad(const std::string& s, size_t width);  // "  ab"
// "  - line\n" for each line, made terminal-safe (plain_text).
std::string text_list(const std::vector<std::string>& lines);

}  // namespace gpuscope::report
