#include "export/json_text.h"

#include <cmath>
#include <cstring>

#include "import/json_cursor.h"

namespace gpuscope::formats {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_sequence(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = s.size() - i;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return n >= 2 && (b(i + 1) & 0xC0) == 0x80 ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (n < 3 || (b(i + 1) & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (n < 4 || (b(i + 1) & 0xC0) != 0x80 || (b(i + 2) & 0xC0) != 0x80 || (b(i + 3) & 0xC0) != 0x80) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t k = utf8_sequence(s, i);
    if (k == 0) return false;
    i += k;
  }
  return true;
}

void append_valid_utf8(std::string& out, std::string_view s) {
  size_t i = 0, run = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    size_t k = utf8_sequence(s, i);
    if (k) {
      i += k;
      continue;
    }
    out.append(s.data() + run, i - run);
    out.append(kReplacement);
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out += '"';
  size_t i = 0, run = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      size_t k = utf8_sequence(s, i);
      if (k) {
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
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out.append(kReplacement);
        }
    }
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

bool is_embeddable_json(std::string_view s) {
  if (s.empty() || !is_valid_utf8(s)) return false;
  for (char ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 && ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') return false;
  // Parse it strictly; a trailing space lets the cursor see the end of a bare number.
  std::string padded(s);
  padded += ' ';
  try {
    json::Cursor c(padded.data(), padded.data() + padded.size(), true, 0);
    c.set_strict();
    c.skip_value();
    while (c.p < padded.data() + padded.size()) {
      if (*c.p != ' ' && *c.p != '\n' && *c.p != '\r' && *c.p != '\t') return false;
      ++c.p;
    }
    return true;
  } catch (const json::SyntaxError&) {
    return false;
  } catch (const json::NeedMore&) {
    return false;
  }
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace gpuscope::formats
