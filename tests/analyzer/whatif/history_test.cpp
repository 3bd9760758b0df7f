// Learning from measurements (analyzer/whatif/history.cpp): try_history.jsonl's
// lines parsed (damaged ones counted), and the tries of the analysed GPU
// correcting the what-if predictions of the same fixes; the CLI's calibration
// tables chosen (calibration_for with LocalCalibrations).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/history.h"

namespace gpuscope::testing {
namespace {

using analyzer::Analysis;
using analyzer::whatif::correct_by_tries;
using analyzer::whatif::parse_try_history;

std::string line(const std::string& gpu, const std::string& fixes, double measured, double lo, double hi,
                 const std::string& predicted) {
  return R"({"gpu": ")" + gpu + R"(", "fix": "x", "fixes": )" + fixes + R"(, "measured_saving_pct": )" +
         std::to_string(measured) + R"(, "measured_range_pct": [)" + std::to_string(lo) + ", " + std::to_string(hi) +
         R"(], "predicted_saving_pct": )" + predicted + "}\n";
}

TEST(TryHistory, DamagedLinesAreCountedAndSkipped) {
  const std::string text = line("G", R"(["amp"])", 10, 9, 11, "20") + "\n" +  // a blank line is not damage
                           "not json\n" + R"({"fixes": ["amp"], "measured_saving_pct": 1})" + "\n" +  // no gpu
                           line("G", R"(["amp"])", 120, 9, 11, "20") +          // a saving of 120 %
                           line("G", R"(["amp"])", 10, 9, 11, R"("a")") +       // a prediction that is no number
                           R"({"gpu": "G", "fix": "cuda-graphs+amp", "measured_saving_pct": 5, "predicted_saving_pct": null})" +
                           "\n" + R"({"gpu": "G", "fixes": ["amp"], "measured_saving_pct": 5, "measured_range_pct": [1]})";
  const auto h = parse_try_history(text, "/c/try_history.jsonl");
  EXPECT_EQ(h.file, "/c/try_history.jsonl");
  EXPECT_EQ(h.damaged_lines, 5);
  ASSERT_EQ(h.tries.size(), 2u);
  EXPECT_EQ(h.tries[0].fixes, std::vector<std::string>{"amp"});
  EXPECT_DOUBLE_EQ(*h.tries[0].predicted_saving_pct, 20);
  EXPECT_DOUBLE_EQ(h.tries[0].measured_low_pct, 9);
  // "fix" split when "fixes" is absent, in one order whatever order was given.
  EXPECT_EQ(h.tries[1].fixes, (std::vector<std::string>{"amp", "cuda-graphs"}));
  EXPECT_FALSE(h.tries[1].predicted_saving_pct.has_value());
}

// A job of 10 ms whose replay predicts 8 ms (7.5-8.5) with amp, and a finding that took it.
Analysis predicted_amp() {
  Analysis a;
  auto& w = a.whatif;
  w.available = true;
  w.job_step_ms = 10;
  analyzer::FixPrediction p;
  p.fix = "amp";
  p.applies = true;
  p.step_ms = 8, p.lo_ms = 7.5, p.hi_ms = 8.5, p.saving_pct = 20;
  w.fixes.push_back(p);
  analyzer::PlanStep s;
  s.fixes = {"amp"};
  s.step_ms = 8, s.lo_ms = 7.5, s.hi_ms = 8.5, s.saving_pct = 20;
  w.plan.push_back(s);
  s.fixes = {"amp", "cuda-graphs"};
  s.step_ms = 5, s.lo_ms = 4, s.hi_ms = 6, s.saving_pct = 50;
  w.plan.push_back(s);
  analyzer::Finding f;
  f.id = "amp";
  f.fix_id = "amp";
  f.predicted_step_ms = 8, f.saving_pct = 20, f.saving_lo_pct = 15, f.saving_hi_pct = 25;
  f.evidence.metrics.push_back({"predicted_step_ms", 8, "ms"});
  a.findings.push_back(f);
  return a;
}

TEST(TryHistory, ThreeTriesShiftThePredictionByTheirMedianAndSetItsRange) {
  // Predicted 20 % each time; measured 10, 12 and 5 %: the steps 0.9/0.8, 0.88/0.8
  // and 0.95/0.8 of the prediction, the median 0.9/0.8 (the try that measured 10 %).
  const std::string text = line("GPU X", R"(["amp"])", 10, 9, 11, "20") + line("GPU X", R"(["amp"])", 12, 11, 13, "20") +
                           line("GPU X", R"(["amp"])", 5, 4, 6, "20") +
                           line("GPU Y", R"(["amp"])", 50, 50, 50, "20") +  // another GPU: not counted
                           line("GPU X", R"(["amp", "cuda-graphs"])", 40, 40, 40, "50");
  Analysis a = predicted_amp();
  correct_by_tries(a, parse_try_history(text, "h.jsonl"), "GPU X");
  const auto& w = a.whatif;
  EXPECT_EQ(w.history.tries, 4);
  EXPECT_EQ(w.history.gpu, "GPU X");
  const auto& p = w.fixes[0];
  ASSERT_TRUE(p.by_tries.has_value());
  EXPECT_TRUE(p.by_tries->corrected);
  EXPECT_EQ(p.by_tries->tries, 3);
  EXPECT_NEAR(p.step_ms, 8 * 0.9 / 0.8, 1e-9);
  EXPECT_NEAR(p.saving_pct, 10, 1e-9);
  EXPECT_DOUBLE_EQ(p.by_tries->step_ms, 8);  // the replay's own, kept beside
  EXPECT_DOUBLE_EQ(p.by_tries->lo_ms, 7.5);
  // The range: the tries' extremes (rounds included: 13 % and 4 %) around the
  // median, widened by (3 + 1) / (3 - 1).
  const double m = std::log(0.9 / 0.8);
  EXPECT_NEAR(p.lo_ms, 8 * std::exp(m + 2 * (std::log(0.87 / 0.8) - m)), 1e-9);
  EXPECT_NEAR(p.hi_ms, 8 * std::exp(m + 2 * (std::log(0.96 / 0.8) - m)), 1e-9);
  EXPECT_LT(p.lo_ms, p.step_ms);
  EXPECT_GT(p.hi_ms, p.step_ms);
  // The plan's entry of the same fixes, and the finding that took the prediction.
  EXPECT_NEAR(w.plan[0].step_ms, p.step_ms, 1e-9);
  EXPECT_NEAR(a.findings[0].predicted_step_ms, p.step_ms, 1e-9);
  EXPECT_NEAR(a.findings[0].saving_pct, 10, 1e-9);
  EXPECT_NEAR(a.findings[0].saving_hi_pct, 100 * (1 - p.lo_ms / 10), 1e-9);
  EXPECT_NEAR(a.findings[0].evidence.metrics[0].value, p.step_ms, 1e-9);
  EXPECT_NE(a.findings[0].evidence.summary.find("Calibrated by 3 tries on this machine (GPU X)"), std::string::npos);
  // One try of amp+cuda-graphs: counted, nothing changed.
  ASSERT_TRUE(w.plan[1].by_tries.has_value());
  EXPECT_EQ(w.plan[1].by_tries->tries, 1);
  EXPECT_FALSE(w.plan[1].by_tries->corrected);
  EXPECT_DOUBLE_EQ(w.plan[1].step_ms, 5);
  EXPECT_DOUBLE_EQ(w.plan[1].hi_ms, 6);
}

TEST(TryHistory, FewerThanThreeTriesOrNoneOnThisGpuChangeNothing) {
  const std::string two = line("GPU X", R"(["amp"])", 10, 9, 11, "20") + line("GPU X", R"(["amp"])", 12, 11, 13, "20") +
                          // a try without a prediction is not compared
                          R"({"gpu": "GPU X", "fixes": ["amp"], "measured_saving_pct": 5, "predicted_saving_pct": null})" "\n";
  Analysis a = predicted_amp();
  correct_by_tries(a, parse_try_history(two, "h.jsonl"), "GPU X");
  EXPECT_EQ(a.whatif.history.tries, 3);
  ASSERT_TRUE(a.whatif.fixes[0].by_tries.has_value());
  EXPECT_EQ(a.whatif.fixes[0].by_tries->tries, 2);
  EXPECT_FALSE(a.whatif.fixes[0].by_tries->corrected);
  EXPECT_DOUBLE_EQ(a.whatif.fixes[0].step_ms, 8);
  EXPECT_DOUBLE_EQ(a.findings[0].predicted_step_ms, 8);

  Analysis b = predicted_amp();
  correct_by_tries(b, parse_try_history(two, "h.jsonl"), "GPU Z");
  EXPECT_EQ(b.whatif.history.tries, 0);
  EXPECT_FALSE(b.whatif.fixes[0].by_tries.has_value());
  EXPECT_FALSE(b.whatif.plan[0].by_tries.has_value());
}

TEST(TryHistory, OnlyTheLatestTriesCount) {
  // 20 old tries that measured what was predicted, then 20 that measured nothing:
  // the latest 20 say the fix saves nothing.
  std::string text;
  for (int i = 0; i < 20; ++i) text += line("G", R"(["amp"])", 20, 20, 20, "20");
  for (int i = 0; i < 20; ++i) text += line("G", R"(["amp"])", 0, 0, 0, "20");
  Analysis a = predicted_amp();
  correct_by_tries(a, parse_try_history(text, "h.jsonl"), "G");
  EXPECT_EQ(a.whatif.fixes[0].by_tries->tries, 20);
  EXPECT_NEAR(a.whatif.fixes[0].step_ms, 10, 1e-9);
}

TEST(LocalCalibrations, ForcedThenBuiltInThenLocalThenGeneric) {
  using analyzer::whatif::calibration_for;
  analyzer::whatif::LocalCalibrations extra;
  analyzer::whatif::Calibration local;
  local.file = "nvidia-h200.json";
  local.device = "NVIDIA H200";
  local.match = "H200";
  local.measured = true;
  extra.local.push_back(local);
  EXPECT_EQ(calibration_for("NVIDIA H200", &extra).file, "nvidia-h200.json");
  EXPECT_EQ(calibration_for("NVIDIA H200 NVL", &extra).file, "nvidia-h200.json");  // by its match
  EXPECT_EQ(calibration_for("NVIDIA H100 80GB HBM3", &extra).file, "h100.json");  // a built-in table wins
  EXPECT_EQ(calibration_for("NVIDIA A10", &extra).file, "generic.json");
  EXPECT_EQ(calibration_for("NVIDIA H200", nullptr).file, "generic.json");
  analyzer::whatif::Calibration forced;
  forced.file = "mine.json";
  extra.forced.push_back(forced);
  EXPECT_EQ(calibration_for("NVIDIA H100 80GB HBM3", &extra).file, "mine.json");
}

}  // namespace
}  // namespace gpuscope::testing
