#include "report/format.h"

#include <cmath>
#include <cstdio>

namespace gpuscope::report {
namespace {

// The value as printed, so that the sign follows what the reader sees.
double rounded(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  double r = std::round(v * scale) / scale;
  return r == 0 ? 0.0 : r;
}

}  // namespace

std::string ms(int64_t ns) { return format_fixed(static_cast<double>(ns) / 1e6, 3); }
std::string ms_unit(double v) { return format_fixed(v, 3) + " ms"; }
std::string seconds(int64_t ns) { return format_fixed(static_cast<double>(ns) / 1e9, 6) + " s"; }

std::string duration(double ms) {
  const double a = std::fabs(ms);
  if (a >= 1 || a == 0) return format_fixed(ms, 3) + " ms";
  if (a >= 0.001) return format_fixed(ms * 1e3, 2) + " us";
  return format_fixed(ms * 1e6, 0) + " ns";
}

std::string signed_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "n/a";
  const double r = rounded(v, decimals);
  return (r > 0 ? "+" : "") + format_fixed(r, decimals);
}

std::string signed_percent(double fraction, int decimals) { return signed_fixed(fraction * 100.0, decimals) + " %"; }
std::string optional_percent(const std::optional<double>& f) { return f ? signed_percent(*f) : std::string(); }
std::string signed_bytes(double b) { return (rounded(b, 0) > 0 ? "+" : "") + format_bytes(b); }
std::string plus_percent(double pct, int decimals) { return (pct >= 0 ? "+" : "") + format_fixed(pct, decimals) + " %"; }

std::string p_value(double p) {
  if (p < 0.0001) return "< 0.0001";
  if (p >= 0.1) return format_fixed(p, 2);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", p);
  return buf;
}

std::string p_is(double p) { return p < 0.0001 ? p_value(p) : "= " + p_value(p); }

std::string metric(double v, const std::string& unit) {
  if (unit == "ms") return duration(v);
  if (unit == "bytes") return format_bytes(v);
  if (unit == "fraction") return format_percent(v);
  return format_fixed(v, v == std::round(v) ? 0 : 2);
}

std::string pad(const std::string& s, size_t width) { return s.size() >= width ? s : s + std::string(width - s.size(), ' '); }
std::string lpad(const std::string& s, size_t width) { return s.size() >= width ? s : std::string(width - s.size(), ' ') + s; }

std::string text_list(const std::vector<std::string>& lines) {
  std::string o;
  for (const auto& line : lines) o += "  - " + plain_text(line) + "\n";
  return o;
}

}  // namespace gpuscope::report
