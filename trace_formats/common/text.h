// Text on its way out of gpuscope. Recorded names (kernels, ops, hosts) can
// hold any byte, so every report, export and viewer label goes through one of
// these: valid UTF-8, escaped for its format (terminal, HTML/SVG/XML,
// Markdown, JSON), and numbers with one set of units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope {

// ---- UTF-8

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid:
// overlong forms, surrogates, code points past U+10FFFF, stray continuation
// bytes and sequences cut short by the end of `s`.
size_t utf8_sequence_length(std::string_view s, size_t i);
bool is_valid_utf8(std::string_view s);
// Appends s with each byte of an invalid sequence replaced by U+FFFD.
void append_valid_utf8(std::string& out, std::string_view s);
std::string valid_utf8(std::string_view s);
// Appends code point `cp` encoded as UTF-8 (the caller keeps it a scalar value).
void append_utf8(std::string& out, uint32_t cp);

// ---- terminal

// Every byte below 0x20 and 0x7f as "\xNN"; with `keep_newlines`, '\n' and '\t'
// stay. For messages that quote input (file names, keys): control bytes could
// move the cursor or retitle the window (ESC ] 0 ; ... BEL).
std::string terminal_safe(std::string_view s, bool keep_newlines = false);
// For a report line: valid UTF-8, control characters as '?', at most `max`
// code points; "..." marks a cut.
std::string plain_text(std::string_view s, size_t max = std::string::npos);

// ---- escaping per format

// For HTML, SVG and XML 1.0 alike: & < > " ' as references, invalid UTF-8 as
// U+FFFD, and what XML 1.0 forbids (control characters other than newline and
// tab, DEL, U+FFFE, U+FFFF) as "&#xFFFD;". With `attribute`, newline and tab
// become "&#10;" and "&#9;" (an XML parser would fold them into spaces).
std::string html_escape(std::string_view s, bool attribute = false);
// For a Markdown table cell or inline text: plain_text, then | ` * _ [ ] \ ~
// escaped with a backslash and < > as "&lt;" "&gt;".
std::string markdown_escape(std::string_view s);
// Appends s as a JSON string literal: quotes, backslashes and control bytes
// escaped, invalid UTF-8 replaced by U+FFFD.
void append_json_string(std::string& out, std::string_view s);

// ---- numbers and units

// v rounded to `decimals` places, for JSON reports: 0 for a non-finite v, and
// never -0.
double round_to(double v, int decimals);
// "12.346"; "-0.000" never appears; "n/a" when not finite.
std::string format_fixed(double v, int decimals);
// 0.1234 -> "12.3 %"; "n/a" when not finite.
std::string format_percent(double fraction, int decimals = 1);
// Decimal units, 1 kB = 1000 B: "999 B", "1.0 kB", "16.1 kB", "8.4 MB",
// "1.50 GB", up to PB; the unit is picked after rounding (999,960 B is
// "1.0 MB"); negative sizes (deltas) keep their sign.
std::string format_bytes(double bytes);

}  // namespace gpuscope
