#include "cli/try_stats.h"

#include <algorithm>
#include <cmath>

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

Comparison compare(const std::vector<std::vector<double>>& base_rounds, const std::vector<std::vector<double>>& rounds,
                   double alpha) {
  Comparison c;
  std::vector<double> base_all, all, savings;
  for (const auto& r : base_rounds) base_all.insert(base_all.end(), r.begin(), r.end());
  for (const auto& r : rounds) all.insert(all.end(), r.begin(), r.end());
  for (size_t i = 0; i < std::min(base_rounds.size(), rounds.size()); ++i) {
    if (base_rounds[i].empty() || rounds[i].empty()) continue;
    const double b = regress::median_of(base_rounds[i]);
    if (b > 0) savings.push_back(100.0 * (1.0 - regress::median_of(rounds[i]) / b));
  }
  if (savings.empty() || base_all.empty() || all.empty()) return c;
  c.saving_pct = regress::median_of(savings);
  c.low_pct = *std::min_element(savings.begin(), savings.end());
  c.high_pct = *std::max_element(savings.begin(), savings.end());
  const regress::ShiftTest t = regress::shift_test(base_all, all);
  c.p_value = c.saving_pct >= 0 ? t.p_faster : t.p_slower;
  const bool same_way = c.saving_pct >= 0 ? c.low_pct > 0 : c.high_pct < 0;
  c.significant = c.p_value < alpha && same_way;
  return c;
}

}  // namespace gpuscope::cli::try_stats
