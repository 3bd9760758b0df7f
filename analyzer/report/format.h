// Formatting shared by the report renderers: numbers, names made safe for a
// terminal, Markdown or HTML, and valid UTF-8 (kernel names can hold any byte).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/analysis.h"

namespace gpuscope::analyzer::report {

std::string fixed(double v, int decimals);
std::string ms(int64_t ns);            // "12.345" (no unit)
std::string ms_unit(double ms_value);  // "12.345 ms"
std::string percent(double fraction);  // 0.123 -> "12.3 %"
std::string bytes(double b);           // "1.50 GB"
std::string seconds(int64_t ns);       // "1.234567 s", for time ranges

// Replaces invalid UTF-8 sequences with U+FFFD.
std::string valid_utf8(std::string_view s);
// For a terminal: valid UTF-8, control characters as '?', cut to `max` characters.
std::string plain(std::string_view s, size_t max = std::string::npos);
std::string html_escape(std::string_view s);
// For a Markdown table cell or inline text: escapes | ` * _ < > [ ] and flattens newlines.
std::string md_escape(std::string_view s);

// The analysed scope in one line: process, device, steps and how they were found.
std::string scope_line(const Analysis& a);
// The job without gpuscope: "untraced step 32.500 ms (measured on the GPU in 8
// untraced steps), traced 39.866 ms: tracing cost +22.7 %; savings are judged
// against the untraced step", or why it is unknown.
std::string untraced_line(const Analysis& a);
// The cross-rank report's scope (`gpuscope cluster`): the ranks, and the step
// the savings are a share of, the one of the process analyze would detail.
std::string cross_rank_scope_line(const Analysis& a);

}  // namespace gpuscope::analyzer::report
