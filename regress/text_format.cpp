#include "regress/text_format.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace gpuscope::regress::fmt {
namespace {

std::string printf_double(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Rounds first so that tiny negatives do not print as "-0.000".
double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  double r = std::round(v * scale) / scale;
  return r == 0 ? 0.0 : r;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

constexpr uint32_t kReplacement = 0xfffd;

// Calls f(code point) for each code point, U+FFFD for each invalid sequence.
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      f(c);
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) ok = false;
      else cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (!ok) {
      f(kReplacement);
      ++i;
      continue;
    }
    f(cp);
    i += len;
  }
}

}  // namespace

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  char f[16];
  std::snprintf(f, sizeof f, "%%.%df", decimals);
  return printf_double(f, rounded(v, decimals));
}

std::string signed_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  const double r = rounded(v, decimals);
  return (r > 0 ? "+" : "") + fixed(r, decimals);
}

std::string percent(double fraction, int decimals) { return fixed(fraction * 100.0, decimals) + " %"; }
std::string signed_percent(double fraction, int decimals) { return signed_fixed(fraction * 100.0, decimals) + " %"; }
std::string optional_percent(const std::optional<double>& f) { return f ? signed_percent(*f) : std::string(); }

std::string bytes(double b) {
  const double a = std::fabs(b);
  if (a < 1000) return fixed(b, 0) + " B";
  static const char* units[] = {"KB", "MB", "GB", "TB", "PB"};
  double v = b / 1000.0;
  int u = 0;
  while (std::fabs(v) >= 1000 && u < 4) v /= 1000.0, ++u;
  return fixed(v, 2) + " " + units[u];
}

std::string signed_bytes(double b) { return (rounded(b, 0) > 0 ? "+" : "") + bytes(b); }

std::string p_value(double p) {
  if (p < 0.0001) return "< 0.0001";
  if (p >= 0.1) return fixed(p, 2);
  return printf_double("%.2g", p);
}

std::string p_is(double p) { return p < 0.0001 ? p_value(p) : "= " + p_value(p); }

std::string duration(double ms) {
  const double a = std::fabs(ms);
  if (a >= 1 || a == 0) return fixed(ms, 3) + " ms";
  if (a >= 0.001) return fixed(ms * 1e3, 2) + " us";
  return fixed(ms * 1e6, 0) + " ns";
}

std::string metric(double v, const std::string& unit) {
  if (unit == "ms") return duration(v);
  if (unit == "bytes") return bytes(v);
  if (unit == "fraction") return percent(v);
  return fixed(v, v == std::round(v) ? 0 : 2);
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_code_point(s, [&](uint32_t cp) { append_utf8(out, cp); });
  return out;
}

std::string plain(std::string_view s, size_t max) {
  std::string out;
  size_t n = 0;
  bool cut = false;
  for_each_code_point(s, [&](uint32_t cp) {
    if (cut) return;
    if (n == max) {
      cut = true;
      return;
    }
    append_utf8(out, cp < 0x20 || cp == 0x7f ? '?' : cp);
    ++n;
  });
  if (cut) out += "\u2026";
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for_each_code_point(s, [&](uint32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: append_utf8(out, (cp < 0x20 && cp != '\n' && cp != '\t') || cp == 0x7f ? '?' : cp);
    }
  });
  return out;
}

std::string xml_escape(std::string_view s, bool attribute) {
  std::string out;
  for_each_code_point(s, [&](uint32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default:
        if (cp < 0x20 || cp == 0xfffe || cp == 0xffff) cp = '?';
        append_utf8(out, cp);
    }
  });
  return out;
}

std::string md_escape(std::string_view s) {
  std::string out;
  for (char c : plain(s)) {
    switch (c) {
      case '\\': case '`': case '*': case '_': case '[': case ']': case '<': case '>': case '|': case '~': case '&':
      case '#': case '!':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace gpuscope::regress::fmt
