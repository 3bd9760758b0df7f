// The statistics behind `gpuscope diff`: the Mann-Whitney test against its
// exact permutation distribution, the Hodges-Lehmann shift, and the decision
// on synthetic step times: at most 1 % false alarms over 1000 pairs drawn from
// the same noise, at least 95 % of 10 % slowdowns caught with 30 steps a side.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "trace_formats/common/error.h"
#include "regress/diff.h"
#include "regress/stats.h"
#include "tests/regress/noise.h"

namespace gpuscope::testing {
namespace {

using regress::classify;
using regress::Direction;
using regress::is_regression;
using regress::shift_test;

constexpr double kAlpha = 0.01, kThreshold = 0.05;
constexpr int kPairs = 1000, kSteps = 30;

// Step times: lognormal around `median_ms` with the given coefficient of
// variation; `spike_rate` of the steps stall 1.5-4x (GC, checkpoint, a slow batch).
std::vector<double> steps(Noise& n, int count, double median_ms, double cv, double spike_rate = 0) {
  std::vector<double> v;
  for (int i = 0; i < count; ++i) {
    double t = median_ms * n.factor(cv);
    if (spike_rate > 0 && n.uniform() < spike_rate) t *= 1.5 + 2.5 * n.uniform();
    v.push_back(t);
  }
  return v;
}

struct Rates {
  int regressions = 0, significant_slower = 0, any_direction = 0;
};

Rates run_pairs(uint64_t seed, double shift, double cv, double spike_rate, int n = kSteps) {
  Noise noise(seed);
  Rates r;
  for (int i = 0; i < kPairs; ++i) {
    auto base = steps(noise, n, 20.0, cv, spike_rate);
    auto next = steps(noise, n, 20.0 * (1 + shift), cv, spike_rate);
    const auto t = shift_test(base, next);
    r.regressions += is_regression(t, kAlpha, kThreshold);
    r.significant_slower += t.p_slower < kAlpha;
    r.any_direction += classify(t, kAlpha, kThreshold) != Direction::kNone;
  }
  std::printf("shift %+.0f %%, cv %.0f %%, stalls %.0f %%: %d/%d regressions, %d p_slower < alpha, %d significant either way\n",
              shift * 100, cv * 100, spike_rate * 100, r.regressions, kPairs, r.significant_slower, r.any_direction);
  return r;
}

TEST(DiffStats, FalseAlarmsAtMostOnePercent) {
  const Rates r = run_pairs(11, 0.0, 0.05, 0);
  EXPECT_LE(r.regressions, kPairs / 100) << "false regressions out of " << kPairs;
  // The test alone must be calibrated too: about alpha, not far above it.
  EXPECT_LE(r.significant_slower, 20) << "p_slower < alpha out of " << kPairs;
}

TEST(DiffStats, TenPercentSlowdownDetectedWithThirtySteps) {
  const Rates r = run_pairs(12, 0.10, 0.05, 0);
  EXPECT_GE(r.regressions, kPairs * 95 / 100) << "10 % slowdowns detected out of " << kPairs;
}

TEST(DiffStats, OutlierStepsNeitherRaiseAlarmsNorHideSlowdowns) {
  // 5 % of steps stall 1.5-4x: a mean-based test would swing with them.
  const Rates same = run_pairs(13, 0.0, 0.05, 0.05);
  EXPECT_LE(same.regressions, kPairs / 100);
  const Rates slow = run_pairs(14, 0.10, 0.05, 0.05);
  EXPECT_GE(slow.regressions, kPairs * 95 / 100);
}

TEST(DiffStats, SmallRealShiftIsSignificantButBelowThreshold) {
  // A steady 2 % shift on a quiet machine: real, but no regression at 5 %.
  const Rates r = run_pairs(15, 0.02, 0.01, 0);
  EXPECT_EQ(r.regressions, 0);
  EXPECT_GE(r.significant_slower, kPairs * 95 / 100);
}

TEST(DiffStats, FasterRunIsNeverARegression) {
  const Rates r = run_pairs(16, -0.10, 0.05, 0);
  EXPECT_EQ(r.regressions, 0);
  EXPECT_GE(r.any_direction, kPairs * 95 / 100);
}

TEST(DiffStats, ShiftEstimateIsTheTypicalRatio) {
  const std::vector<double> base(20, 10.0), next(20, 11.0);
  const auto t = shift_test(base, next);
  EXPECT_NEAR(t.shift, 0.10, 1e-12);
  EXPECT_NEAR(t.ci_low, 0.10, 1e-12);
  EXPECT_NEAR(t.ci_high, 0.10, 1e-12);
  EXPECT_LT(t.p_slower, 1e-6);
  EXPECT_GT(t.p_faster, 0.99);

  Noise n(3);
  auto b = steps(n, 200, 50, 0.05), x = steps(n, 200, 55, 0.05);
  const auto u = shift_test(b, x);
  EXPECT_NEAR(u.shift, 0.10, 0.02);
  EXPECT_LT(u.ci_low, u.shift);
  EXPECT_GT(u.ci_high, u.shift);
  EXPECT_LT(u.ci_low, 0.10);
  EXPECT_GT(u.ci_high, 0.10);
}

TEST(DiffStats, IdenticalRunsAreNoChange) {
  const std::vector<double> v = {10, 11, 12, 10, 11, 12, 10};
  const auto t = shift_test(v, v);
  EXPECT_EQ(t.shift, 0);
  EXPECT_GT(t.p_slower, 0.4);
  EXPECT_GT(t.p_faster, 0.4);
  EXPECT_EQ(classify(t, kAlpha, kThreshold), Direction::kNone);
  const std::vector<double> flat(10, 5.0);
  const auto f = shift_test(flat, flat);  // zero variance: nothing to tell apart
  EXPECT_EQ(f.p_slower, 1);
  EXPECT_EQ(f.p_faster, 1);
}

// Every way of splitting the pooled values into the two groups: the
// standardized U must have mean 0 and variance 1 exactly (this checks the tie
// correction), and the normal p-value must stay close to the exact one.
TEST(DiffStats, MannWhitneyMatchesThePermutationDistribution) {
  const std::vector<double> pooled = {1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 7, 7};
  const size_t n = 6;
  std::vector<bool> pick(pooled.size(), false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(n), true);
  std::vector<double> zs, us;
  do {
    std::vector<double> a, b;
    for (size_t i = 0; i < pooled.size(); ++i) (pick[i] ? b : a).push_back(pooled[i]);
    const auto mw = regress::mann_whitney(a, b);
    zs.push_back(mw.z);
    us.push_back(mw.u);
  } while (std::prev_permutation(pick.begin(), pick.end()));
  ASSERT_EQ(zs.size(), 924u);
  double mean = 0, var = 0;
  for (double z : zs) mean += z;
  mean /= static_cast<double>(zs.size());
  for (double z : zs) var += (z - mean) * (z - mean);
  var /= static_cast<double>(zs.size());
  EXPECT_NEAR(mean, 0, 1e-12);
  EXPECT_NEAR(var, 1, 1e-12);

  const std::vector<double> base = {1, 2, 2, 3, 3, 4}, next = {3, 5, 5, 6, 7, 7};
  const auto obs = regress::mann_whitney(base, next);
  const double exact = static_cast<double>(std::count_if(us.begin(), us.end(), [&](double u) { return u >= obs.u; })) /
                       static_cast<double>(us.size());
  std::printf("U = %.1f: normal p = %.5f, exact p = %.5f\n", obs.u, obs.p_greater, exact);
  EXPECT_NEAR(obs.p_greater, exact, 0.01) << "exact " << exact;
  EXPECT_LT(obs.p_greater, 0.05);
}

TEST(DiffStats, LongRecordingsAreThinnedNotRefused) {
  Noise n(4);
  auto b = steps(n, 5000, 10, 0.03), x = steps(n, 5000, 10.5, 0.03);
  const auto t = shift_test(b, x);
  EXPECT_NEAR(t.shift, 0.05, 0.01);
  EXPECT_LT(t.p_slower, 1e-10);
}

TEST(DiffStats, PercentParsing) {
  EXPECT_DOUBLE_EQ(regress::parse_percent("5%", "--threshold"), 0.05);
  EXPECT_DOUBLE_EQ(regress::parse_percent("2.5", "--threshold"), 0.025);
  EXPECT_DOUBLE_EQ(regress::parse_percent(" 10 % ", "--threshold"), 0.10);
  EXPECT_DOUBLE_EQ(regress::parse_percent("0", "--threshold"), 0.0);
  for (const char* bad : {"", "%", "five", "5%%", "-1", "5x", "nan", "1e9"})
    EXPECT_THROW(regress::parse_percent(bad, "--threshold"), Error) << bad;
}

}  // namespace
}  // namespace gpuscope::testing
