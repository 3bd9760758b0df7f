// The collector's steps for loops whose whole step is one CUDA graph replay
// (collector/graph_steps.h), fed launches as the CUPTI callback feeds them.
#include "collector/graph_steps.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1'000'000;

// Launches of `execs` in turn, one round every 10 ms from `t0`; the steps they close.
std::vector<GraphStep> replay(GraphSteps& g, const std::vector<uint64_t>& execs, int rounds, uint64_t t0) {
  std::vector<GraphStep> steps;
  for (int i = 0; i < rounds; ++i)
    for (size_t k = 0; k < execs.size(); ++k)
      if (auto s = g.on_launch(execs[k], t0 + i * 10 * kMs + k * kMs)) steps.push_back(*s);
  return steps;
}

TEST(GraphSteps, WholeStepReplayAnchorsAfterARunAndNumbersOnFromThePlugin) {
  GraphSteps g;
  for (int n = 0; n < 5; ++n) g.on_plugin_step(n);  // warm-up and the capture's Optimizer.step
  const auto steps = replay(g, {0xE}, 12, 100 * kMs);
  // Launches 1..7 make the run; the 8th closes the step begun at the 7th.
  ASSERT_EQ(steps.size(), 12u - GraphSteps::kRunToAnchor + 1);
  EXPECT_EQ(steps[0], (GraphStep{160 * kMs, 170 * kMs, 5}));
  EXPECT_EQ(steps[1], (GraphStep{170 * kMs, 180 * kMs, 6}));
  EXPECT_EQ(steps.back().number, 5 + static_cast<int64_t>(steps.size()) - 1);
}

TEST(GraphSteps, SeveralGraphsPerStepAnchorOnTheFirstToRepeat) {
  GraphSteps g;
  const auto steps = replay(g, {0xA, 0xB, 0xC}, 10, 0);
  ASSERT_EQ(steps.size(), 10u - GraphSteps::kRunToAnchor + 1);
  for (const auto& s : steps) EXPECT_EQ(s.end - s.start, 10 * kMs);  // A to A: one whole round
  EXPECT_EQ(steps[0].start % (10 * kMs), 0u);
}

TEST(GraphSteps, GraphsReplayedInsideOptimizerStepsMakeNoSteps) {
  GraphSteps g;
  // Gradient accumulation over 4 micro-batches, each a replay of one graph,
  // then Optimizer.step outside the graph: the plugin's steps stay the steps.
  std::vector<GraphStep> steps;
  uint64_t t = 0;
  for (int n = 0; n < 50; ++n) {
    for (int micro = 0; micro < 4; ++micro)
      if (auto s = g.on_launch(0xF, t += kMs)) steps.push_back(*s);
    g.on_plugin_step(n);
  }
  EXPECT_TRUE(steps.empty());
}

TEST(GraphSteps, APluginStepDropsTheAnchor) {
  GraphSteps g;
  EXPECT_FALSE(replay(g, {0xE}, 9, 0).empty());
  g.on_plugin_step(40);
  // The run starts again: no step until another run of launches.
  const auto steps = replay(g, {0xE}, GraphSteps::kRunToAnchor, 1000 * kMs);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].number, 41);
}

TEST(GraphSteps, AnotherGraphLaunchedOnceDoesNotBreakTheRun) {
  GraphSteps g;
  std::vector<GraphStep> steps;
  for (int i = 0; i < 12; ++i) {
    if (auto s = g.on_launch(0xE, i * 10 * kMs)) steps.push_back(*s);
    if (i == 3) g.on_launch(0xD, i * 10 * kMs + kMs);  // an evaluation graph, once
  }
  EXPECT_EQ(steps.size(), 12u - GraphSteps::kRunToAnchor + 1);
}

}  // namespace
}  // namespace gpuscope::collector
