// Number formatting and escaping shared by the diff and check renderers.
// Recorded names can hold any byte: every output escapes for its own format
// and replaces invalid UTF-8 (and, for XML, characters XML 1.0 forbids).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::regress::fmt {

std::string fixed(double v, int decimals);         // "-0.000" never appears
std::string signed_fixed(double v, int decimals);  // "+1.250", "-0.300", "0.000"
std::string percent(double fraction, int decimals = 1);         // 0.124 -> "12.4 %"
std::string signed_percent(double fraction, int decimals = 1);  // 0.124 -> "+12.4 %"
std::string optional_percent(const std::optional<double>& fraction);  // "" when absent
std::string bytes(double b);                       // "1.50 GB", "512 B"
std::string signed_bytes(double b);                // "+1.50 GB"
std::string p_value(double p);                     // "0.031", "< 0.0001"
std::string p_is(double p);                        // "= 0.031", "< 0.0001"
std::string duration(double ms);                   // "12.345 ms", "13.25 us", "310 ns": readable at any scale
std::string metric(double v, const std::string& unit);  // by unit: ms, bytes, fraction, count

std::string valid_utf8(std::string_view s);  // invalid sequences become U+FFFD
// Valid UTF-8, control characters as '?', at most `max` code points (an ellipsis marks a cut).
std::string plain(std::string_view s, size_t max = std::string::npos);
std::string html_escape(std::string_view s);
// XML 1.0 characters only; in an attribute newlines and tabs become character references.
std::string xml_escape(std::string_view s, bool attribute = true);
std::string md_escape(std::string_view s);   // inside a Markdown table cell or inline text

}  // namespace gpuscope::regress::fmt
