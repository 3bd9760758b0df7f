// cli/try_stats.cpp and cli/try_plan.cpp: warm-up detection, the comparison
// of rounds, the variants and the replay's predictions (docs/try.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/try_plan.h"
#include "cli/try_stats.h"
#include "trace_formats/common/error.h"

namespace gpuscope::cli {
namespace {

TEST(TryStats, StepTimesFromBoundaries) {
  EXPECT_EQ(try_stats::step_ms({0, 2'000'000, 5'000'000}), (std::vector<double>{2.0, 3.0}));
  EXPECT_TRUE(try_stats::step_ms({7}).empty());
}

TEST(TryStats, SettlesAfterACompileLikeWarmup) {
  // Two slow steps (compile), a slowly settling one, then steady ~10 ms.
  std::vector<double> ms = {900, 300, 14};
  for (int i = 0; i < 20; ++i) ms.push_back(10 + (i % 3) * 0.1);
  const auto from = try_stats::settled_from(ms, 5, 0.05);
  ASSERT_TRUE(from.has_value());
  EXPECT_EQ(*from, 3u);  // the first window of 5 whose median matches the next window's
}

TEST(TryStats, NotSettledWhileTimesKeepFalling) {
  std::vector<double> ms;
  for (int i = 0; i < 20; ++i) ms.push_back(100.0 / (1 + i));  // every window 20 %+ faster than the last
  EXPECT_FALSE(try_stats::settled_from(ms, 3, 0.05).has_value());
  EXPECT_FALSE(try_stats::settled_from({10, 10, 10, 10, 10}, 3, 0.05).has_value());  // too few steps to tell
}

TEST(TryStats, WindowFollowsSteps) {
  EXPECT_EQ(try_stats::window_for(6), 3u);
  EXPECT_EQ(try_stats::window_for(30), 5u);
}

TEST(TryStats, ComparesRoundByRound) {
  std::vector<std::vector<double>> base, fast, same;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> b, f, s;
    for (int i = 0; i < 30; ++i) {
      const double jitter = (i % 5) * 0.05;
      b.push_back(10 + r + jitter);       // the machine drifts between rounds
      f.push_back(8 + 0.8 * r + jitter);  // 20 % faster in every round
      s.push_back(10 + r + ((i + 2) % 5) * 0.05);
    }
    base.push_back(b), fast.push_back(f), same.push_back(s);
  }
  const auto c = try_stats::compare(base, fast, 0.05);
  EXPECT_NEAR(c.saving_pct, 20, 1.5);
  EXPECT_GT(c.low_pct, 15);
  EXPECT_LT(c.p_value, 0.001);
  EXPECT_TRUE(c.significant);
  const auto n = try_stats::compare(base, same, 0.05);
  EXPECT_NEAR(n.saving_pct, 0, 0.5);
  EXPECT_FALSE(n.significant);
}

// Rounds of 30 steps around `ms`, jittered the same way in every round.
std::vector<double> round_of(double ms) {
  std::vector<double> r;
  for (int i = 0; i < 30; ++i) r.push_back(ms * (1 + (i % 5 - 2) * 0.002));
  return r;
}

TEST(TryStats, OneRoundFarOffAsksForMoreRounds) {
  // The machine drifts (the job as it is takes 100, 110, 120 ms); the variant
  // saves 50 % in rounds 1 and 2, but round 3 is far off (+33.3 %), as
  // ResNet-50's amp+channels-last was on the H100 (+33.3..+50.5 %).
  std::vector<std::vector<double>> base = {round_of(100), round_of(110), round_of(120)};
  std::vector<std::vector<double>> var = {round_of(50), round_of(55), round_of(80)};
  auto c = try_stats::compare(base, var, 0.05);
  EXPECT_NEAR(c.low_pct, 33.33, 0.01);
  EXPECT_NEAR(c.high_pct, 50, 0.01);
  EXPECT_EQ(c.outliers, (std::vector<size_t>{2}));
  EXPECT_EQ(c.kept, 2u);
  const std::string why = try_stats::more_rounds_why(c, 3);
  EXPECT_EQ(why, "round 3 (+33.3 %) far off, 2 of its rounds agree (+50.0..+50.0 %); 3 wanted");
  // With the other rounds apart too, both are said.
  auto wide = try_stats::compare(base, {round_of(50), round_of(61.6), round_of(108)}, 0.05);  // +50, +44, +10
  ASSERT_EQ(wide.outliers, (std::vector<size_t>{2}));
  EXPECT_EQ(try_stats::more_rounds_why(wide, 3),
            "round 3 (+10.0 %) far off, and the others spread over 6.0 points (+44.0..+50.0 %), more than 4");

  // A fourth round agrees with the first two: three rounds agree, no more asked.
  // Each round against its own run as it is, the median is the 50 % the
  // rounds that agree measured; the outlier round's steps are out of the rank test.
  base.push_back(round_of(105));
  var.push_back(round_of(52.5));
  c = try_stats::compare(base, var, 0.05);
  EXPECT_EQ(c.outliers, (std::vector<size_t>{2}));
  EXPECT_EQ(c.kept, 3u);
  EXPECT_NEAR(c.saving_pct, 50, 0.01);
  EXPECT_NEAR(c.low_pct, 33.33, 0.01);  // the range still shows every round
  EXPECT_NEAR(c.kept_low_pct, 50, 0.01);
  EXPECT_TRUE(c.significant);
  EXPECT_EQ(try_stats::more_rounds_why(c, 3), "");
}

TEST(TryStats, RoundsThatSpreadWithoutAnOutlierAskForMore) {
  const std::vector<std::vector<double>> base = {round_of(100), round_of(100), round_of(100)};
  auto c = try_stats::compare(base, {round_of(60), round_of(55), round_of(50)}, 0.05);  // +40, +45, +50
  EXPECT_TRUE(c.outliers.empty());
  EXPECT_EQ(try_stats::more_rounds_why(c, 3), "its rounds' savings spread over 10.0 points (+40.0..+50.0 %), more than 4");
  // Within 4 points: settled.
  c = try_stats::compare(base, {round_of(51), round_of(50), round_of(49)}, 0.05);
  EXPECT_EQ(try_stats::more_rounds_why(c, 3), "");
  EXPECT_NEAR(c.saving_pct, 50, 0.01);
  // Two rounds cannot tell which one is off: both kept, more asked.
  c = try_stats::compare({round_of(100), round_of(100)}, {round_of(60), round_of(50)}, 0.05);
  EXPECT_TRUE(c.outliers.empty());
  EXPECT_NE(try_stats::more_rounds_why(c, 2), "");
}

TEST(TryStats, OutlierRounds) {
  EXPECT_TRUE(try_stats::outlier_rounds({10, 30}).empty());
  EXPECT_EQ(try_stats::outlier_rounds({50, 50, 30}), (std::vector<size_t>{2}));  // no spread among the others
  EXPECT_TRUE(try_stats::outlier_rounds({50, 50, 48.5}).empty());  // within half the spread limit
  // Rounds that jitter by several points keep a round 6 points off.
  EXPECT_TRUE(try_stats::outlier_rounds({40, 44, 48, 52, 46}).empty());
  EXPECT_EQ(try_stats::outlier_rounds({40, 44, 48, 52, 46, 10}), (std::vector<size_t>{5}));
}

TEST(TryPlan, ParsesVariants) {
  const auto v = try_plan::parse_fixes("amp,compile+cuda-graphs");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1], (std::vector<std::string>{"compile", "cuda-graphs"}));
  EXPECT_THROW(try_plan::parse_fixes("amp,,compile"), Error);
  EXPECT_THROW(try_plan::parse_fixes("amp,warp"), Error);
  EXPECT_THROW(try_plan::parse_fixes("amp+compile,compile+amp"), Error);
}

nlohmann::json report() {
  return nlohmann::json::parse(R"({
    "summary": {"devices": [{"name": "NVIDIA H100 80GB HBM3"}]},
    "findings": [{"fix_id": "amp"}, {"fix_id": "host-sync"}, {"fix_id": null}],
    "whatif": {"available": true, "job_step_ms": 100,
      "fixes": [{"fix": "amp", "applies": true, "saving_pct": 20, "step_range_ms": [70, 90]},
                {"fix": "compile", "applies": false, "why_not": "already"}],
      "plan": [{"fixes": ["amp"], "saving_pct": 20, "step_range_ms": [70, 90]},
               {"fixes": ["amp", "channels-last"], "saving_pct": 30, "step_range_ms": [60, 80]},
               {"fixes": ["amp", "channels-last", "host-sync"], "saving_pct": 40, "step_range_ms": [50, 70]}],
      "asked": []}})");
}

TEST(TryPlan, VariantsFromAReport) {
  const auto r = report();
  const auto plan = try_plan::make_plan({}, &r);
  ASSERT_EQ(plan.variants.size(), 2u);  // amp (finding and plan), amp+channels-last (plan)
  EXPECT_EQ(plan.variants[0].name(), "amp");
  EXPECT_EQ(plan.variants[1].name(), "amp+channels-last");
  EXPECT_EQ(plan.gpu, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(plan.not_tried.size(), 2u);
  EXPECT_EQ(plan.not_tried[0], "host-sync: needs a code change");
  ASSERT_TRUE(plan.variants[0].predicted.has_value());
  EXPECT_DOUBLE_EQ(plan.variants[0].predicted->saving_pct, 20);
  EXPECT_DOUBLE_EQ(plan.variants[0].predicted->low_pct, 10);   // 1 - 90/100
  EXPECT_DOUBLE_EQ(plan.variants[0].predicted->high_pct, 30);  // 1 - 70/100
  EXPECT_EQ(plan.variants[1].predicted->from, "plan");
}

// What the report says to measure before adopting it (might save, might slow
// the job) is tried too, after the plan's entries, with its prediction.
TEST(TryPlan, FixesToMeasureFirstAreTried) {
  auto r = report();
  r["whatif"]["measure_first"] = nlohmann::json::parse(R"([
    {"fixes": ["fused-optimizer"], "saving_pct": 2.5, "step_range_ms": [96, 101]},
    {"fixes": ["amp", "channels-last", "compile"], "saving_pct": 50, "step_range_ms": [40, 60]},
    "damaged", {"no_fixes": true}])");
  const auto plan = try_plan::make_plan({}, &r);
  ASSERT_EQ(plan.variants.size(), 4u);
  EXPECT_EQ(plan.variants[2].name(), "fused-optimizer");
  EXPECT_EQ(plan.variants[3].name(), "amp+channels-last+compile");
  ASSERT_TRUE(plan.variants[3].predicted.has_value());
  EXPECT_EQ(plan.variants[3].predicted->from, "measure_first");
  EXPECT_DOUBLE_EQ(plan.variants[3].predicted->saving_pct, 50);
  EXPECT_DOUBLE_EQ(plan.variants[2].predicted->low_pct, -1);  // its range reaches a slower step
}

TEST(TryPlan, GivenFixesArePricedWhereTheReplayPricedThem) {
  const auto r = report();
  const auto plan = try_plan::make_plan(try_plan::parse_fixes("channels-last+amp,compile,fused-optimizer"), &r);
  ASSERT_EQ(plan.variants.size(), 3u);
  EXPECT_DOUBLE_EQ(plan.variants[0].predicted->saving_pct, 30);  // the plan's entry, in any order
  EXPECT_FALSE(plan.variants[1].predicted.has_value());           // compile does not apply
  EXPECT_FALSE(plan.variants[2].predicted.has_value());
  const auto none = try_plan::make_plan({}, nullptr);
  EXPECT_EQ(none.variants.size(), try_plan::hookable().size());
}

}  // namespace
}  // namespace gpuscope::cli
