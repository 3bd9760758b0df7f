#include "regress/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuscope::regress {
namespace {

double upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// Evenly spaced order statistics: keeps the shape of a large sample so that
// the pairwise differences stay few (n*m grows fast with long recordings).
std::vector<double> thin(std::vector<double> v, size_t keep) {
  std::sort(v.begin(), v.end());
  if (v.size() <= keep || keep < 2) return v;
  std::vector<double> out;
  out.reserve(keep);
  const double step = static_cast<double>(v.size() - 1) / static_cast<double>(keep - 1);
  for (size_t i = 0; i < keep; ++i) out.push_back(v[static_cast<size_t>(std::lround(static_cast<double>(i) * step))]);
  return out;
}

constexpr double kZ975 = 1.959963984540054;  // two-sided 95 %
constexpr size_t kMaxPairs = 4'000'000;
constexpr size_t kThinTo = 2000;

}  // namespace

double MannWhitney::p_two_sided() const { return std::min(1.0, 2.0 * std::min(p_greater, p_less)); }

MannWhitney mann_whitney(std::span<const double> base, std::span<const double> next) {
  MannWhitney r;
  const size_t n = base.size(), m = next.size();
  if (n == 0 || m == 0) return r;
  struct Item {
    double v;
    bool next;
  };
  std::vector<Item> all;
  all.reserve(n + m);
  for (double v : base) all.push_back({v, false});
  for (double v : next) all.push_back({v, true});
  std::sort(all.begin(), all.end(), [](const Item& a, const Item& b) { return a.v < b.v; });
  double rank_sum = 0, ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].v == all[i].v) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k)
      if (all[k].next) rank_sum += mid_rank;
    ties += t * t * t - t;
    i = j;
  }
  const double dn = static_cast<double>(n), dm = static_cast<double>(m), total = dn + dm;
  r.u = rank_sum - dm * (dm + 1) / 2.0;
  const double mean = dn * dm / 2.0;
  const double var = dn * dm / 12.0 * ((total + 1) - (total > 1 ? ties / (total * (total - 1)) : 0));
  if (var <= 0) return r;  // every value equal: nothing to tell apart
  const double sd = std::sqrt(var);
  r.z = (r.u - mean) / sd;
  r.p_greater = upper_tail((r.u - mean - 0.5) / sd);
  r.p_less = upper_tail((mean - r.u - 0.5) / sd);
  return r;
}

ShiftTest shift_test(std::span<const double> base_ms, std::span<const double> new_ms) {
  ShiftTest t;
  t.n_base = base_ms.size();
  t.n_new = new_ms.size();
  if (base_ms.empty() || new_ms.empty()) return t;
  const MannWhitney mw = mann_whitney(base_ms, new_ms);
  t.p_slower = mw.p_greater;
  t.p_faster = mw.p_less;

  // Hodges-Lehmann on logs: the median of every pairwise log ratio.
  std::vector<double> lb, ln;
  for (double v : base_ms) lb.push_back(std::log(std::max(v, 1e-12)));
  for (double v : new_ms) ln.push_back(std::log(std::max(v, 1e-12)));
  if (lb.size() * ln.size() > kMaxPairs) {
    lb = thin(std::move(lb), kThinTo);
    ln = thin(std::move(ln), kThinTo);
  }
  std::vector<double> d;
  d.reserve(lb.size() * ln.size());
  for (double y : ln)
    for (double x : lb) d.push_back(y - x);
  const size_t pairs = d.size();
  auto kth = [&](size_t k) {  // 0-based order statistic
    std::nth_element(d.begin(), d.begin() + static_cast<long>(k), d.end());
    return d[k];
  };
  double med = kth(pairs / 2);
  if (pairs % 2 == 0) med = (med + *std::max_element(d.begin(), d.begin() + static_cast<long>(pairs / 2))) / 2.0;
  t.shift = std::exp(med) - 1.0;

  // Distribution-free interval: the K-th smallest and K-th largest difference.
  const double dn = static_cast<double>(lb.size()), dm = static_cast<double>(ln.size());
  const double k = std::floor(dn * dm / 2.0 - kZ975 * std::sqrt(dn * dm * (dn + dm + 1) / 12.0));
  if (k < 1) {
    auto [lo, hi] = std::minmax_element(d.begin(), d.end());
    t.ci_low = std::exp(*lo) - 1.0;
    t.ci_high = std::exp(*hi) - 1.0;
  } else {
    const auto ki = static_cast<size_t>(k);
    t.ci_low = std::exp(kth(ki - 1)) - 1.0;
    t.ci_high = std::exp(kth(pairs - ki)) - 1.0;
  }
  return t;
}

Direction classify(const ShiftTest& t, double alpha, double threshold) {
  if (t.p_slower < alpha && t.shift > threshold) return Direction::kSlower;
  if (t.p_faster < alpha && t.shift < -threshold) return Direction::kFaster;
  if (t.p_slower < alpha || t.p_faster < alpha) return Direction::kSmallSignificant;
  return Direction::kNone;
}

double median_of(std::span<const double> v) {
  if (v.empty()) return 0;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const size_t mid = s.size() / 2;
  return s.size() % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2.0;
}

double percentile_of(std::span<const double> v, double p) {
  if (v.empty()) return 0;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(s.size())));
  return s[std::clamp<size_t>(rank, 1, s.size()) - 1];
}

}  // namespace gpuscope::regress
