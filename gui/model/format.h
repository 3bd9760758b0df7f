// Human-readable times, durations and counts for labels and tables; sizes
// are format_bytes (common/text.h), as in the reports.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::gui {

// "850 ns", "12.3 µs", "4.56 ms", "1.234 s".
std::string format_duration(double ns);
// A timestamp (ns since origin) with enough digits for `resolution_ns`.
std::string format_time(double ns, double resolution_ns = 1);
std::string format_count(int64_t n);  // 1234567 -> "1,234,567"

// Parses "1.5", "1.5s", "250ms", "10us", "300ns" (a bare number is seconds) into ns.
bool parse_time(const std::string& text, int64_t& ns);

}  // namespace gpuscope::gui
