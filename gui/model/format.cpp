#include "gui/model/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpuscope::gui {

std::string format_duration(double ns) {
  char buf[64];
  double a = std::fabs(ns);
  if (a < 1e3)
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (a < 1e6)
    std::snprintf(buf, sizeof buf, "%.3g µs", ns / 1e3);
  else if (a < 1e9)
    std::snprintf(buf, sizeof buf, "%.3g ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", ns / 1e9);
  return buf;
}

std::string format_time(double ns, double resolution_ns) {
  char buf[64];
  // Pick the unit from the resolution so ruler labels differ tick to tick.
  if (resolution_ns >= 1e8) {
    std::snprintf(buf, sizeof buf, "%.*f s", resolution_ns >= 1e9 ? 0 : 1, ns / 1e9);
  } else if (resolution_ns >= 1e5) {
    int digits = resolution_ns >= 1e6 ? 0 : 1;
    std::snprintf(buf, sizeof buf, "%.*f ms", digits, ns / 1e6);
  } else if (resolution_ns >= 1e2) {
    int digits = resolution_ns >= 1e3 ? 0 : 1;
    std::snprintf(buf, sizeof buf, "%.*f µs", digits, ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  }
  return buf;
}

std::string format_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

bool parse_time(const std::string& text, int64_t& ns) {
  if (text.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  std::string unit(end);
  double scale;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us" || unit == "µs")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else
    return false;
  ns = static_cast<int64_t>(std::llround(v * scale));
  return true;
}

}  // namespace gpuscope::gui
