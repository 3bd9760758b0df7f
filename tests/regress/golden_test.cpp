// Golden reports of `gpuscope diff` and `gpuscope check` in every format, on
// synthetic recordings written in the test. A mismatch writes <expected>.actual
// next to the expected file and shows the diff; GPUSCOPE_UPDATE_GOLDEN=1
// rewrites the expected files. Also: the structure every format must keep
// (JSON parses, XML is well formed enough for CI parsers, names are escaped).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "trace_formats/common/error.h"
#include "regress/diff.h"
#include "tests/regress/recordings.h"
#include "tests/support/golden.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kGolden = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "regress" / "golden";

void expect_golden(const std::string& actual, const std::string& name) {
  if (std::string why = test_support::golden_mismatch(kGolden / name, actual); !why.empty()) ADD_FAILURE() << why;
}

regress::Recording load(const std::string& name, const RunSpec& spec) {
  const std::string p = temp_path(name);
  write_run(p, spec);
  return regress::Recording::load(p, {});
}

class DiffGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new regress::Recording(load("base.db", base_spec()));
    regressed_ = new regress::Recording(load("new.db", regressed_spec()));
    RunSpec rerun = base_spec();
    rerun.seed = 3;
    rerun_ = new regress::Recording(load("rerun.db", rerun));
  }
  static void TearDownTestSuite() {
    delete base_;
    delete regressed_;
    delete rerun_;
  }
  static regress::Recording *base_, *regressed_, *rerun_;
};
regress::Recording* DiffGolden::base_ = nullptr;
regress::Recording* DiffGolden::regressed_ = nullptr;
regress::Recording* DiffGolden::rerun_ = nullptr;

TEST_F(DiffGolden, RegressionEveryFormat) {
  const auto d = regress::diff(*base_, *regressed_, {});
  ASSERT_EQ(d.verdict, regress::Verdict::kRegression) << d.headline;
  EXPECT_EQ(d.exit_code(), 1);
  // The slower GEMM is named first, among kernels and in the top changes.
  ASSERT_FALSE(d.kernels.empty());
  EXPECT_EQ(d.kernels.front().name, base_spec().kernels[0].name);
  EXPECT_EQ(d.kernels.front().status, regress::Status::kGrown);
  EXPECT_TRUE(d.kernels.front().significant);
  ASSERT_FALSE(d.top.empty());
  EXPECT_NE(d.top.front().name.find("gemm"), std::string::npos);
  expect_golden(regress::to_text(d), "regression.txt");
  expect_golden(regress::to_markdown(d), "regression.md");
  expect_golden(regress::to_junit(d), "regression.junit.xml");
  expect_golden(regress::to_json(d), "regression.json");
  expect_golden(regress::to_html(d), "regression.html");
}

TEST_F(DiffGolden, NoiseOnly) {
  const auto d = regress::diff(*base_, *rerun_, {});
  EXPECT_EQ(d.exit_code(), 0) << d.headline;
  EXPECT_NE(d.verdict, regress::Verdict::kRegression);
  expect_golden(regress::to_markdown(d), "noise.md");
  expect_golden(regress::to_junit(d), "noise.junit.xml");
  expect_golden(regress::to_json(d), "noise.json");
}

TEST_F(DiffGolden, ReversedIsFaster) {
  const auto d = regress::diff(*regressed_, *base_, {});
  EXPECT_EQ(d.verdict, regress::Verdict::kImprovement) << d.headline;
  EXPECT_EQ(d.exit_code(), 0);
  ASSERT_FALSE(d.kernels.empty());
  EXPECT_EQ(d.kernels.front().status, regress::Status::kShrunk);
  EXPECT_NE(d.kernels.front().name.find("gemm"), std::string::npos);
}

TEST_F(DiffGolden, AttributionAddedRemovedAndTheRest) {
  const auto d = regress::diff(*base_, *regressed_, {});
  auto find = [&](const std::vector<regress::Change>& v, const std::string& needle) -> const regress::Change* {
    for (const auto& c : v)
      if (c.name.find(needle) != std::string::npos) return &c;
    return nullptr;
  };
  const auto* added = find(d.kernels, "fused_mul_clamp_kernel");
  const auto* removed = find(d.kernels, "mul|scale");
  ASSERT_TRUE(added && removed);
  EXPECT_EQ(added->status, regress::Status::kAdded);
  EXPECT_EQ(removed->status, regress::Status::kRemoved);
  EXPECT_NEAR(added->new_ms, 0.060, 0.005);
  EXPECT_NEAR(removed->base_ms, 0.090, 0.005);
  EXPECT_FALSE(added->delta_pct.has_value());
  const auto* gemm = find(d.kernels, "gemm");
  ASSERT_TRUE(gemm);
  EXPECT_NEAR(gemm->delta_ms, 2 * 0.8 * 0.4, 0.05);  // two launches, each 40 % slower
  EXPECT_NEAR(gemm->base_count, 2, 1e-9);
  ASSERT_TRUE(gemm->share.has_value());
  EXPECT_GT(*gemm->share, 0.6);  // the doubled copy takes most of the rest
  bool copy_in_top = false;
  for (const auto& c : d.top) copy_in_top |= c.kind == "memcpy" && c.status == regress::Status::kGrown;
  EXPECT_TRUE(copy_in_top);
  const auto* mm = find(d.ops, "aten::mm");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->status, regress::Status::kGrown);
  EXPECT_EQ(d.ops.front().name, "aten::mm");
  // Copies, memory and counts.
  ASSERT_FALSE(d.copies.empty());
  EXPECT_EQ(d.copies.front().label, "memcpy HtoD pinned->device");
  EXPECT_NEAR(d.copies.front().new_bytes / d.copies.front().base_bytes, 2.0, 1e-9);
  bool reserved = false;
  for (const auto& m : d.metrics)
    if (m.name == "peak memory reserved") {
      reserved = true;
      EXPECT_EQ(m.base, 2.0 * (1 << 30));
      EXPECT_EQ(m.next, 3.0 * (1 << 30));
    }
  EXPECT_TRUE(reserved);
}

TEST_F(DiffGolden, ThresholdDecides) {
  regress::DiffOptions o;
  o.threshold = 0.50;  // the step grew ~20 %: significant, but under 50 %
  const auto d = regress::diff(*base_, *regressed_, o);
  EXPECT_EQ(d.verdict, regress::Verdict::kWithinThreshold);
  EXPECT_EQ(d.exit_code(), 0);
}

TEST_F(DiffGolden, FormatsStayParseable) {
  const auto d = regress::diff(*base_, *regressed_, {});
  const auto j = nlohmann::json::parse(regress::to_json(d));
  EXPECT_EQ(j["schema"], "gpuscope-diff/1");
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["base"]["steps"], 30);
  EXPECT_EQ(j["base"]["step_ms"].size(), 30u);
  size_t changed = 0;
  for (const auto* list : {&d.kernels, &d.ops})
    for (const auto& c : *list) changed += c.status != regress::Status::kUnchanged;
  EXPECT_EQ(j["top_changes"].size(), changed + 1) << "every changed kernel and op, and the copy";
  // The kernel name with | < > ` in it stays escaped in every text format.
  const std::string md = regress::to_markdown(d), xml = regress::to_junit(d), html = regress::to_html(d);
  EXPECT_EQ(md.find("mul|scale"), std::string::npos);
  EXPECT_NE(md.find("mul\\|scale & &lt;clamp&gt; \\`x\\`"), std::string::npos);
  EXPECT_EQ(xml.find("<clamp>"), std::string::npos);
  EXPECT_NE(xml.find("&lt;clamp&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<clamp>"), std::string::npos);
  EXPECT_EQ(std::count(xml.begin(), xml.end(), '<'), std::count(xml.begin(), xml.end(), '>'));
  EXPECT_NE(xml.find("<failure type=\"regression\""), std::string::npos);
  EXPECT_EQ(md.rfind("## \u274c gpuscope diff: REGRESSION", 0), 0u) << "the verdict comes first";
}

TEST_F(DiffGolden, CheckEveryFormat) {
  const auto budget = regress::parse_budget(
      R"({"max_step_ms_median": 3.0, "max_step_ms_p95": 100, "max_peak_memory_bytes": 4000000000,
          "min_gpu_utilization": 0.5, "forbid_findings": ["host-sync", "pageable-memcpy"]})",
      "budget.json");
  const auto c = regress::check(*regressed_, budget, "budget.json");
  EXPECT_FALSE(c.pass());
  EXPECT_EQ(c.exit_code(), 1);
  ASSERT_GE(c.checks.size(), 5u);
  EXPECT_FALSE(c.checks[0].pass) << c.checks[0].actual;  // median over 3 ms
  EXPECT_TRUE(c.checks[1].pass);
  EXPECT_TRUE(c.checks[2].pass) << c.checks[2].actual;
  expect_golden(regress::to_text(c), "check.txt");
  expect_golden(regress::to_markdown(c), "check.md");
  expect_golden(regress::to_junit(c), "check.junit.xml");
  expect_golden(regress::to_json(c), "check.json");

  const auto loose = regress::parse_budget(R"({"max_step_ms_median": 100, "forbid_findings": ["pageable-memcpy"]})", "b.json");
  EXPECT_TRUE(regress::check(*base_, loose, "b.json").pass());
}

TEST(DiffBudget, StrictParsing) {
  auto bad = [](const std::string& text, const std::string& needle) {
    try {
      regress::parse_budget(text, "budget.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("budget.json: ", 0), 0u) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  };
  bad("{", "not valid JSON");
  bad(R"({"max_step_ms_median": 1e309})", "the number 1e309 is out of range");  // found by budget_fuzzer
  bad(R"({"max_step_ms_median": 1e999})", "the number 1e999 is out of range (a limit is a finite number");
  for (const char* text : {"{", R"({"max_step_ms_median": 1e999})", R"({"max_step_ms_median": 1 2})"}) {
    try {  // nlohmann's exception tags are for programmers, not in the one line (issue 50)
      regress::parse_budget(text, "budget.json");
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("json.exception"), std::string::npos) << e.what();
    }
  }
  bad("[]", "a budget is a JSON object");
  bad("{}", "sets no limit");
  bad(R"({"max_step_ms_medain": 10})", "unknown key \"max_step_ms_medain\"");
  bad(R"({"max_step_ms_median": "10"})", "must be a number");
  bad(R"({"max_step_ms_median": -1})", "greater than 0");
  bad(R"({"min_gpu_utilization": 80})", "fraction");
  bad(R"({"forbid_findings": "host-sync"})", "array of rule ids");
  bad(R"({"forbid_findings": ["host_sync"]})", "unknown rule id \"host_sync\"");
  const auto b = regress::parse_budget(R"({"comment": "H200 nightly", "max_peak_memory_bytes": 4e10})", "budget.json");
  EXPECT_EQ(b.max_peak_memory_bytes.value_or(0), 40'000'000'000);
}

}  // namespace
}  // namespace gpuscope::testing
