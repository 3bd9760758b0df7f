// Golden reports: every format on a few synthetic scenarios, the JSON report on
// every planted one, and every recording in tests/data/ (advisor_<rule>.db and
// others). A mismatch writes <expected>.actual next to the expected file and
// shows the diff. GPUSCOPE_UPDATE_GOLDEN=1 rewrites the expected files.
//
// Adding a real recording: put X.db in tests/data/, run this test once, check
// tests/analyzer/golden/data/X.*.actual and rename them to drop ".actual" (or run
// with GPUSCOPE_UPDATE_GOLDEN=1). advisor_*.db need goldens; other recordings are
// compared only when their goldens exist.
// advisor_<rule>.db must have <rule> as its top finding; advisor_healthy.db
// must have no finding above 5 % of step time.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "analyzer/report/tried.h"
#include "tests/analyzer/recorded_data.h"
#include "tests/analyzer/test_util.h"
#include "tests/support/golden.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "analyzer" / "golden";

void expect_golden(const std::string& actual, const fs::path& expected) {
  if (std::string why = test_support::golden_mismatch(expected, actual); !why.empty()) ADD_FAILURE() << why;
}

// Long recordings would make megabyte goldens: keep the first steps of the per-step array.
std::string json_golden(const analyzer::Analysis& a) {
  auto j = nlohmann::ordered_json::parse(analyzer::to_json(a));
  constexpr size_t kKeepSteps = 20;
  if (j["steps"].size() > kKeepSteps) {
    auto& steps = j["steps"];
    steps.erase(steps.begin() + kKeepSteps, steps.end());
  }
  return j.dump(2) + "\n";
}

void check_all_formats(const analyzer::Analysis& a, const fs::path& stem, bool only_existing = false) {
  if (only_existing && !fs::exists(stem.string() + ".json") && !std::getenv("GPUSCOPE_UPDATE_GOLDEN")) return;
  expect_golden(analyzer::to_text(a), stem.string() + ".txt");
  expect_golden(json_golden(a), stem.string() + ".json");
  expect_golden(analyzer::to_markdown(a), stem.string() + ".md");
  expect_golden(analyzer::to_html(a), stem.string() + ".html");
}

analyzer::Analysis scenario(const std::string& name) {
  const std::string path = temp_db(name);
  write_scenario(name, true, path);
  return analyze_path(path);
}

class AllFormats : public ::testing::TestWithParam<std::string> {};

TEST_P(AllFormats, MatchGolden) { check_all_formats(scenario(GetParam()), kGolden / GetParam()); }

INSTANTIATE_TEST_SUITE_P(Synthetic, AllFormats, ::testing::Values("healthy", "host-sync", "odd_names", "no_gpu"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

TEST(GoldenJson, EveryPlantedScenario) {
  for (const auto& name : planted_scenarios()) {
    SCOPED_TRACE(name);
    expect_golden(analyzer::to_json(scenario(name)), kGolden / "planted" / (name + ".json"));
  }
}

TEST(Escaping, OddNamesStaySafeInEveryFormat) {
  auto a = scenario("odd_names");
  ASSERT_FALSE(a.findings.empty());
  const std::string html = analyzer::to_html(a);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos) << "no external resources besides the SVG namespace";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  const std::string text = analyzer::to_text(a);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "no terminal escapes from recorded names";
  const std::string md = analyzer::to_markdown(a);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  auto j = nlohmann::json::parse(analyzer::to_json(a));  // valid JSON, valid UTF-8
  EXPECT_EQ(j["schema"], analyzer::kReportSchema);
}

// `gpuscope try --attach` (docs/try.md): the "Tried" section of every format
// from an attached gpuscope-try/1 document, its measurements beside the
// planted amp scenario's predictions (within range, outside, not priced, a
// failure and a variant whose recorded name and reason hold markup).
TEST(GoldenTried, AttachedTryInEveryFormat) {
  auto a = scenario("amp");
  std::ifstream f(kGolden / "tried" / "try_results.json");
  std::stringstream doc;
  doc << f.rdbuf();
  ASSERT_FALSE(doc.str().empty());
  a.tried = analyzer::tried_fixes(doc.str(), a.whatif);
  ASSERT_EQ(a.tried.size(), 5u);
  check_all_formats(a, kGolden / "tried" / "amp");
  const std::string html = analyzer::to_html(a);
  EXPECT_NE(html.find("<h2>Tried</h2>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<i>odd"), std::string::npos);
  EXPECT_NE(html.find("failed: exit code 1: RuntimeError: &lt;script&gt;alert("), std::string::npos) << "the failure's reason, escaped";
  EXPECT_NE(html.find("x &amp; y"), std::string::npos);
  // Nothing attached: no section.
  a.tried.clear();
  EXPECT_EQ(analyzer::to_html(a).find("<h2>Tried</h2>"), std::string::npos);
}

// Recordings the GPU machine produced (tests/data/*.db).
TEST(RecordedData, MatchGoldenAndExpectations) {
  int seen = 0;
  {
    for (const fs::path& path : recorded_data()) {
      const std::string stem = recording_stem(path);
      SCOPED_TRACE(stem);
      ++seen;
      auto a = analyze_path(readable_recording(path));
      // Goldens are required for the advisor and real-model recordings; other teams'
      // recordings are compared when someone added goldens for them.
      check_all_formats(a, kGolden / "data" / stem, !stem.starts_with("advisor_") && !stem.starts_with("models_"));
      if (stem == "advisor_healthy") {
        // torch.compile measured 10.875 against 10.878 ms a step here on the H200
        // (samples/advisor/healthy.py --compile, 2026-12-03): nothing to fuse.
        for (const auto& f : a.findings) EXPECT_LE(f.saving_pct, 5.0) << f.id;
      } else if (stem.starts_with("advisor_") && !stem.ends_with("_fixed")) {
        std::string rule = stem.substr(8);
        for (char& c : rule)
          if (c == '_') c = '-';
        ASSERT_FALSE(a.findings.empty());
        if (stem == "advisor_channels_last") {
          // The what-if replay prices torch.compile (the `fusion` finding) above
          // channels_last on this sample; compile was never timed on it, so
          // the planted finding need only be among the first two.
          ASSERT_GE(a.findings.size(), 2u);
          EXPECT_TRUE(a.findings[0].id == rule || a.findings[1].id == rule) << finding_list(a);
        } else {
          EXPECT_EQ(a.findings.front().id, rule) << finding_list(a);
        }
      }
    }
  }
  if (seen == 0) GTEST_SKIP() << "no recordings in tests/data yet";
}

}  // namespace
}  // namespace gpuscope::testing
