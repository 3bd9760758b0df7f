#include "cli/try_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "regress/stats.h"

namespace gpuscope::cli::try_stats {
namespace {
// A step this far from the settled median is still warm-up, not noise.
constexpr double kOutlier = 0.25;
}  // namespace

std::vector<double> step_ms(const std::vector<long long>& boundaries_ns) {
  std::vector<double> out;
  for (size_t i = 1; i < boundaries_ns.size(); ++i) out.push_back(static_cast<double>(boundaries_ns[i] - boundaries_ns[i - 1]) / 1e6);
  return out;
}

std::optional<size_t> settled_from(const std::vector<double>& ms, size_t window, double tolerance) {
  if (window == 0) return 0;
  for (size_t i = 0; i + 2 * window <= ms.size(); ++i) {
    const double a = regress::median_of(std::span(ms).subspan(i, window));
    const double b = regress::median_of(std::span(ms).subspan(i + window, window));
    if (b > 0 && std::fabs(a - b) <= tolerance * b) {
      // The median passes over one or two compile steps still in the window:
      // the steady steps begin after the last of the window's far-off steps.
      size_t start = i;
      for (size_t j = i; j < i + window; ++j)
        if (std::fabs(ms[j] - b) > kOutlier * b) start = j + 1;
      return start;
    }
  }
  return std::nullopt;
}

size_t window_for(size_t steps) { return std::clamp<size_t>(steps / 4, 3, 5); }

std::vector<size_t> outlier_rounds(const std::vector<double>& savings) {
  std::vector<size_t> out;
  if (savings.size() < 3) return out;  // two rounds that disagree cannot say which is off
  const double med = regress::median_of(savings);
  std::vector<double> dev;
  for (double s : savings) dev.push_back(std::fabs(s - med));
  const double limit = std::max(kOutlierDeviations * 1.4826 * regress::median_of(dev), kSpreadLimitPts / 2);
  for (size_t i = 0; i < savings.size(); ++i)
    if (dev[i] > limit) out.push_back(i);
  return out;
}

Comparison compare(const std::vector<std::vector<double>>& base_rounds, const std::vector<std::vector<double>>& rounds,
                   double alpha) {
  Comparison c;
  std::vector<double> savings;
  std::vector<size_t> paired;  // round index of each saving
  const size_t n = std::min(base_rounds.size(), rounds.size());
  c.round_savings.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (base_rounds[i].empty() || rounds[i].empty()) continue;
    const double b = regress::median_of(base_rounds[i]);
    if (b <= 0) continue;
    c.round_savings[i] = 100.0 * (1.0 - regress::median_of(rounds[i]) / b);
    savings.push_back(*c.round_savings[i]);
    paired.push_back(i);
  }
  if (savings.empty()) return c;
  c.saving_pct = regress::median_of(savings);
  c.low_pct = *std::min_element(savings.begin(), savings.end());
  c.high_pct = *std::max_element(savings.begin(), savings.end());
  std::vector<bool> off(savings.size(), false);
  for (size_t k : outlier_rounds(savings)) {
    off[k] = true;
    c.outliers.push_back(paired[k]);
  }
  // The rank test pools steps, so a round far off would weigh in it with all
  // its steps: the outlier rounds are left out, both sides of the pair.
  std::vector<double> base_all, all;
  c.kept_low_pct = c.high_pct, c.kept_high_pct = c.low_pct;
  for (size_t k = 0; k < savings.size(); ++k) {
    if (off[k]) continue;
    ++c.kept;
    c.kept_low_pct = std::min(c.kept_low_pct, savings[k]);
    c.kept_high_pct = std::max(c.kept_high_pct, savings[k]);
    const auto& b = base_rounds[paired[k]];
    const auto& v = rounds[paired[k]];
    base_all.insert(base_all.end(), b.begin(), b.end());
    all.insert(all.end(), v.begin(), v.end());
  }
  const regress::ShiftTest t = regress::shift_test(base_all, all);
  c.p_value = c.saving_pct >= 0 ? t.p_faster : t.p_slower;
  const bool same_way = c.saving_pct >= 0 ? c.kept_low_pct > 0 : c.kept_high_pct < 0;
  c.significant = c.p_value < alpha && same_way;
  return c;
}

std::string more_rounds_why(const Comparison& c, size_t wanted) {
  if (c.round_savings.empty() || c.kept == 0) return "";
  char b[256];
  const auto spread = [&b](double lo, double hi) {
    std::snprintf(b, sizeof b, "spread over %.1f points (%+.1f..%+.1f %%), more than %.0f", hi - lo, lo, hi, kSpreadLimitPts);
    return std::string(b);
  };
  if (c.outliers.empty())
    return c.high_pct - c.low_pct > kSpreadLimitPts ? "its rounds' savings " + spread(c.low_pct, c.high_pct) : "";
  const bool wide = c.kept_high_pct - c.kept_low_pct > kSpreadLimitPts;
  if (!wide && c.kept >= wanted) return "";
  std::string why = "round";
  for (size_t i = 0; i < c.outliers.size(); ++i) {
    std::snprintf(b, sizeof b, "%s %zu (%+.1f %%)", i == 0 ? (c.outliers.size() == 1 ? "" : "s") : ",", c.outliers[i] + 1,
                  *c.round_savings[c.outliers[i]]);
    why += b;
  }
  why += " far off";
  if (wide) return why + ", and the others " + spread(c.kept_low_pct, c.kept_high_pct);
  std::snprintf(b, sizeof b, ", %zu of its rounds agree (%+.1f..%+.1f %%); %zu wanted", c.kept, c.kept_low_pct,
                c.kept_high_pct, wanted);
  return why + b;
}

}  // namespace gpuscope::cli::try_stats
