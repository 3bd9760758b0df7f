#include "trace_formats/common/text.h"

#include <cmath>
#include <cstdio>

namespace gpuscope {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// U+FFFE and U+FFFF: valid UTF-8, but not characters XML 1.0 allows.
bool is_xml_noncharacter(std::string_view s, size_t i, size_t len) {
  return len == 3 && static_cast<unsigned char>(s[i]) == 0xEF && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
         static_cast<unsigned char>(s[i + 2]) >= 0xBE;
}

// The reference HTML and XML need for an ASCII character, or nullptr.
const char* markup_reference(char c, bool attribute) {
  if (c == '&') return "&amp;";
  if (c == '<') return "&lt;";
  if (c == '>') return "&gt;";
  if (c == '"') return "&quot;";
  if (c == '\'') return "&#39;";
  if (c == '\n') return attribute ? "&#10;" : nullptr;
  if (c == '\t') return attribute ? "&#9;" : nullptr;
  return is_control(static_cast<unsigned char>(c)) ? "&#xFFFD;" : nullptr;
}

}  // namespace

size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(i);
  const size_t n = s.size() - i;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || !cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || !cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;  // continuation byte, C0/C1 (always overlong) or F5..FF
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t k = utf8_sequence_length(s, i);
    if (k == 0) return false;
    i += k;
  }
  return true;
}

void append_valid_utf8(std::string& out, std::string_view s) {
  // Valid runs are copied whole: names are nearly always ASCII.
  size_t i = 0, run = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (const size_t k = utf8_sequence_length(s, i)) {
      i += k;
      continue;
    }
    out.append(s.data() + run, i - run);
    out.append(kReplacement);
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  append_valid_utf8(out, s);
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string terminal_safe(std::string_view s, bool keep_newlines) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_control(c) || (keep_newlines && (c == '\n' || c == '\t'))) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string plain_text(std::string_view s, size_t max) {
  std::string out;
  out.reserve(s.size());
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars == max) {
      out += "...";
      break;
    }
    ++chars;
    const size_t k = utf8_sequence_length(s, i);
    if (k == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    if (k == 1 && is_control(static_cast<unsigned char>(s[i]))) out += '?';
    else out.append(s.substr(i, k));
    i += k;
  }
  return out;
}

std::string html_escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t k = utf8_sequence_length(s, i);
    if (k == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    if (k > 1) {
      if (is_xml_noncharacter(s, i, k)) out += "&#xFFFD;";
      else out.append(s.substr(i, k));
      i += k;
      continue;
    }
    const char c = s[i++];
    if (const char* ref = markup_reference(c, attribute)) out += ref;
    else out += c;
  }
  return out;
}

std::string markdown_escape(std::string_view s) {
  std::string out;
  for (char c : plain_text(s)) {
    switch (c) {
      case '|': case '`': case '*': case '_': case '[': case ']': case '\\': case '~':
        out += '\\';
        out += c;
        break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t i = 0, run = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const size_t k = utf8_sequence_length(s, i)) {
        i += k;
        continue;
      }
    }
    out.append(s.data() + run, i - run);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out.append(kReplacement);
        }
    }
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

double round_to(double v, int decimals) {
  if (!std::isfinite(v)) return 0;
  const double scale = std::pow(10.0, decimals);
  const double r = std::round(v * scale) / scale;
  return r == 0 ? 0.0 : r;
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s(buf);
  // "-0.000" reads as a sign error in a report.
  if (s.starts_with("-") && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string format_percent(double fraction, int decimals) {
  if (!std::isfinite(fraction)) return "n/a";
  return format_fixed(100 * fraction, decimals) + " %";
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return "n/a";
  static constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  static constexpr int kDecimals[] = {0, 1, 1, 2, 2, 2};
  constexpr int kLast = 5;
  const double a = std::fabs(bytes);
  int u = 0;
  double scale = 1;
  for (; u < kLast; ++u, scale *= 1000) {
    const double step = std::pow(10.0, kDecimals[u]);
    if (std::round(a / scale * step) / step < 1000) break;
  }
  return format_fixed(bytes / scale, kDecimals[u]) + " " + kUnits[u];
}

}  // namespace gpuscope
