// The step times the analyzer finds in real H200 recordings equal the ones the
// scripts measured themselves (CUDA events or a synchronized clock, printed as
// median_step_ms in their GPUSCOPE_SAMPLE line, kept in
// tests/data/script_step_medians.json). Several of these jobs never wait for
// the GPU inside a step, so their CPU-side step boundaries alone would be wrong.
// advisor_recompile.db is left out: its step boundaries match the script's
// to 0.1 ms, but every step is a compilation of 1.2-2.4 s, so the analyzer's
// warm-up rule (the first step, then leading steps over twice the median) keeps
// the script's second warm-up step and the medians differ.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

TEST(RecordedSteps, MedianStepMatchesTheScriptsOwnClock) {
  const fs::path data = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data";
  std::ifstream in(data / "script_step_medians.json");
  ASSERT_TRUE(in) << "tests/data/script_step_medians.json";
  const auto medians = nlohmann::json::parse(in);
  ASSERT_FALSE(medians.empty());
  for (const auto& [name, want] : medians.items()) {
    SCOPED_TRACE(name);
    const fs::path db = data / (name + ".db");
    ASSERT_TRUE(fs::exists(db)) << db;
    auto a = analyze_path(db.string());
    const double ms = want.get<double>();
    EXPECT_NEAR(a.summary.step_ms_median, ms, 0.01 * ms) << a.summary.step_source_detail;
  }
}

}  // namespace
}  // namespace gpuscope::testing
