// Every rule fires on its planted scenario (as the top finding) and stays
// silent on the same loop without the bottleneck.
#include <gtest/gtest.h>

#include "analyzer/rules/rule.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

class RuleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleTest, FiresAsTopFindingWhenPlanted) {
  auto a = analyze_scenario(GetParam(), true);
  ASSERT_FALSE(a.findings.empty()) << "no findings";
  EXPECT_EQ(a.findings.front().id, GetParam()) << finding_list(a);
  const analyzer::Finding* f = find(a, GetParam());
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->saving_ms_per_step, 0.0);
  EXPECT_FALSE(f->evidence.summary.empty());
  EXPECT_FALSE(f->evidence.metrics.empty());
  EXPECT_FALSE(f->evidence.ranges.empty()) << "a finding must point the viewer at time ranges";
  EXPECT_FALSE(f->fix.code.empty());
  for (const auto& r : f->evidence.ranges) EXPECT_LE(r.start_ns, r.end_ns);
}

TEST_P(RuleTest, SilentWhenNotPlanted) {
  auto a = analyze_scenario(GetParam(), false);
  EXPECT_EQ(find(a, GetParam()), nullptr) << finding_list(a);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Planted, RuleTest, ::testing::ValuesIn(planted_scenarios()), test_name);

TEST(Rules, EveryRuleHasAPlantedScenario) {
  auto planted = planted_scenarios();
  for (const auto* r : analyzer::all_rules())
    EXPECT_NE(std::find(planted.begin(), planted.end(), std::string(r->id)), planted.end()) << r->id;
  EXPECT_EQ(planted.size(), analyzer::all_rules().size());
}

TEST(Rules, HealthyLoopHasNoFindingAboveFivePercent) {
  auto a = analyze_scenario("healthy");
  for (const auto& f : a.findings) EXPECT_LE(f.saving_pct, 5.0) << f.id;
}

TEST(Rules, IdsAreUniqueAndThresholdsNamed) {
  std::set<std::string_view> ids;
  for (const auto* r : analyzer::all_rules()) {
    EXPECT_TRUE(ids.insert(r->id).second) << r->id;
    EXPECT_FALSE(r->thresholds.empty()) << r->id;
    for (const auto& t : r->thresholds) EXPECT_TRUE(t.name.starts_with("k")) << r->id << " " << t.name;
  }
}

}  // namespace
}  // namespace gpuscope::testing
