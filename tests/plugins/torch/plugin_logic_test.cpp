// The torch plugin's torch-free logic: step rules, marker names, the version
// check and the bounded JSON writer.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "plugins/torch/build_info.h"
#include "gpuscope/plugin.h"
#include "plugins/torch/json_buffer.h"
#include "plugins/torch/range_names.h"
#include "plugins/torch/step_tracker.h"

namespace gpuscope::torch_plugin {
namespace {

struct Step {
  uint64_t start, end;
  int64_t number;
  uint32_t source;
  bool operator==(const Step&) const = default;
};
void PrintTo(const Step& s, std::ostream* os) {
  *os << "{" << s.start << ", " << s.end << ", #" << s.number << ", source " << s.source << "}";
}
std::vector<Step> g_steps;
void record_step(uint64_t start, uint64_t end, int64_t number, uint32_t source) {
  g_steps.push_back({start, end, number, source});
}

class StepTrackerTest : public ::testing::Test {
 protected:
  void SetUp() override { g_steps.clear(); }
  StepTracker tracker{record_step};
  const RangeInfo kLoader = classify_range("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  const RangeInfo kZeroGrad = classify_range("Optimizer.zero_grad#Adam.zero_grad");
  const RangeInfo kAdamStep = classify_range("Optimizer.step#Adam.step");
  const RangeInfo kSgdStep = classify_range("Optimizer.step#SGD.step");
};

TEST(RangeNames, Classifies) {
  EXPECT_EQ(classify_range("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__").kind,
            RangeKind::kDataLoader);
  RangeInfo step = classify_range("Optimizer.step#AdamW.step");
  EXPECT_EQ(step.kind, RangeKind::kOptimizerStep);
  EXPECT_EQ(step.optimizer_class, "AdamW");
  EXPECT_EQ(classify_range("Optimizer.zero_grad#SGD.zero_grad").kind, RangeKind::kOptimizerOther);
  RangeInfo prof = classify_range("ProfilerStep#17");
  EXPECT_EQ(prof.kind, RangeKind::kProfilerStep);
  EXPECT_EQ(prof.step_number, 17);
  EXPECT_EQ(classify_range("ProfilerStep#x").kind, RangeKind::kUser);
  EXPECT_EQ(classify_range("ProfilerStep#").kind, RangeKind::kUser);
  EXPECT_EQ(classify_range("my forward").kind, RangeKind::kUser);
  EXPECT_EQ(range_source(RangeKind::kDataLoader), 3u);
  EXPECT_EQ(range_source(RangeKind::kOptimizerOther), 4u);
  EXPECT_EQ(range_source(RangeKind::kProfilerStep), 5u);
  EXPECT_EQ(range_source(RangeKind::kUser), 2u);
  EXPECT_TRUE(is_record_function_plumbing("profiler::_record_function_enter_new"));
  EXPECT_FALSE(is_record_function_plumbing("aten::add"));
  EXPECT_TRUE(is_engine_backward("autograd::engine::evaluate_function: AddmmBackward0"));
}

TEST_F(StepTrackerTest, OptimizerStepsSpanFromTheFirstLoaderWait) {
  tracker.note_activity(10);  // setup ops before the loop
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t t = 100 + i * 100;
    tracker.on_range_end(kLoader, t, t + 20, false);
    tracker.on_range_end(kZeroGrad, t + 25, t + 30, false);
    tracker.on_range_end(kAdamStep, t + 80, t + 90, false);
  }
  std::vector<Step> want = {{100, 190, 0, GPUSCOPE_STEP_OPTIMIZER},
                            {190, 290, 1, GPUSCOPE_STEP_OPTIMIZER},
                            {290, 390, 2, GPUSCOPE_STEP_OPTIMIZER}};
  EXPECT_EQ(g_steps, want);
}

TEST_F(StepTrackerTest, WithoutMarkersTheFirstStepStartsAtTheFirstActivity) {
  tracker.note_activity(50);
  tracker.note_activity(60);  // only the first counts
  tracker.on_range_end(kAdamStep, 80, 90, false);
  ASSERT_EQ(g_steps.size(), 1u);
  EXPECT_EQ(g_steps[0], (Step{50, 90, 0, GPUSCOPE_STEP_OPTIMIZER}));
}

TEST_F(StepTrackerTest, NestedAndOtherOptimizersDoNotCloseSteps) {
  tracker.note_activity(1);
  tracker.on_range_end(kAdamStep, 10, 20, /*nested=*/true);  // inside a wrapper's step
  tracker.on_range_end(kAdamStep, 5, 25, false);
  tracker.on_range_end(kSgdStep, 30, 40, false);  // a second optimizer in the same iteration
  tracker.on_range_end(kAdamStep, 50, 60, false);
  std::vector<Step> want = {{1, 25, 0, GPUSCOPE_STEP_OPTIMIZER}, {25, 60, 1, GPUSCOPE_STEP_OPTIMIZER}};
  EXPECT_EQ(g_steps, want);
}

TEST_F(StepTrackerTest, ProfilerStepsWinOverOptimizerSteps) {
  tracker.on_range_end(kAdamStep, 10, 20, false);
  tracker.on_range_end(classify_range("ProfilerStep#3"), 20, 40, false);
  tracker.on_range_end(kAdamStep, 30, 35, false);
  // No activity noted: the first step starts where its optimizer call does.
  std::vector<Step> want = {{10, 20, 0, GPUSCOPE_STEP_OPTIMIZER}, {20, 40, 3, GPUSCOPE_STEP_PROFILER_STEP}};
  EXPECT_EQ(g_steps, want);
}

TEST_F(StepTrackerTest, BackwardPassesCloseStepsWhenNoOptimizerIsSeen) {
  tracker.note_activity(5);
  // Pass 1: nodes 10, 7, 4 (AccumulateGrad has no number).
  tracker.on_backward_op_start(10, 100);
  tracker.on_backward_op_end(110);
  tracker.on_backward_op_start(-1, 111);
  tracker.on_backward_op_end(112);
  tracker.on_backward_op_start(7, 113);
  tracker.on_backward_op_end(120);
  tracker.on_backward_op_start(4, 121);
  tracker.on_backward_op_end(130);
  EXPECT_TRUE(g_steps.empty());
  // Pass 2 starts with a higher number than any seen: pass 1's step ends.
  tracker.on_backward_op_start(22, 200);
  tracker.on_backward_op_end(210);
  tracker.on_backward_op_start(19, 211);
  tracker.on_backward_op_end(230);
  ASSERT_EQ(g_steps.size(), 1u);
  EXPECT_EQ(g_steps[0], (Step{5, 130, 0, GPUSCOPE_STEP_OPTIMIZER}));
  tracker.finish();
  ASSERT_EQ(g_steps.size(), 2u);
  EXPECT_EQ(g_steps[1], (Step{130, 230, 1, GPUSCOPE_STEP_OPTIMIZER}));
  tracker.finish();  // idempotent
  EXPECT_EQ(g_steps.size(), 2u);
}

TEST_F(StepTrackerTest, AnyOptimizerRangeTurnsTheBackwardRuleOff) {
  tracker.on_backward_op_start(10, 100);
  tracker.on_backward_op_end(110);
  tracker.on_range_end(kZeroGrad, 120, 125, false);  // gradient accumulation, step comes later
  tracker.on_backward_op_start(20, 200);
  tracker.on_backward_op_end(210);
  tracker.finish();
  EXPECT_TRUE(g_steps.empty());
}

TEST(BuildInfo, ReadsOptionsAndComparesReleases) {
  TorchBuild b = torch_build_from_options({{"TORCH_VERSION", "2.11.0"},
                                           {"CUDA_VERSION", "13.0"},
                                           {"COMMIT_SHA", "abc123"},
                                           {"USE_CUDA", "ON"},
                                           {"BUILD_TYPE", "Release"}});
  EXPECT_TRUE(b.known);
  EXPECT_EQ(b.version, "2.11.0");
  EXPECT_EQ(b.cuda_version, "13.0");
  EXPECT_EQ(b.git_version, "abc123");
  EXPECT_EQ(b.summary, "BUILD_TYPE=Release, USE_CUDA=ON, CUDA_VERSION=13.0");
  EXPECT_FALSE(torch_build_from_options({}).known);

  EXPECT_TRUE(same_torch_release("2.11.0", "2.11.0+cu130"));
  EXPECT_TRUE(same_torch_release("1.13.0", "1.13.0a0+git49444c3"));
  EXPECT_FALSE(same_torch_release("2.10.0", "2.11.0"));
  EXPECT_FALSE(same_torch_release("2.1.0", "2.11.0"));
  EXPECT_FALSE(same_torch_release("", "2.11.0"));
  std::string msg = version_mismatch_message("2.10.0", "2.11.0");
  EXPECT_NE(msg.find("built for torch 2.10.0 but this process runs torch 2.11.0"), std::string::npos);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

TEST(JsonBuffer, CutsWholeElementsAndStaysValid) {
  char buf[32];
  JsonBuffer out(buf, sizeof buf);
  out.put('[');
  int written = 0;
  for (int i = 0; i < 100; ++i) {
    size_t mark = out.mark();
    if (i) out.put(',');
    out.put('[');
    out.put_int(1000 + i);
    out.put(']');
    if (!out.ok()) {
      out.rollback(mark);
      break;
    }
    ++written;
  }
  out.close(']');
  EXPECT_TRUE(out.full());
  EXPECT_LE(out.size(), sizeof buf);
  EXPECT_EQ(out.view(), "[[1000],[1001],[1002]]");
  EXPECT_EQ(written, 3);

  char s[32];
  JsonBuffer str(s, sizeof s);
  str.put_string("a\"b\\c\n");
  EXPECT_EQ(str.view(), "\"a\\\"b\\\\c\"");
}

}  // namespace
}  // namespace gpuscope::torch_plugin
