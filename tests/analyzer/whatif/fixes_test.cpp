// The what-if model on step graphs with known answers (docs/rules.md,
// "What-if"): the replay's pipelining, and the three ways a fix moves the
// bottleneck that fixed speed factors miss.
#include <gtest/gtest.h>

#include "analyzer/whatif/advise.h"
#include "analyzer/whatif/fixes.h"
#include "tests/analyzer/whatif/graph_builder.h"

namespace gpuscope::testing {
namespace {

using analyzer::whatif::Bound;
using analyzer::whatif::Calibration;
using analyzer::whatif::Graph;
using analyzer::whatif::Kind;
using analyzer::whatif::replay;

Calibration table() {
  Calibration cal;
  cal.file = "test.json";
  cal.measured = true;
  flat(cal, "gemm_fp32_to_bf16", 0.25);
  flat(cal, "conv_fp32_to_bf16", 0.6);
  flat(cal, "conv_nchw_to_nhwc_fp32", 0.9);
  flat(cal, "groupnorm_nchw_to_nhwc", 1.6);
  flat(cal, "batchnorm_nchw_to_nhwc", 0.7);
  flat(cal, "elementwise_fp32_to_bf16", 0.6);
  cost(cal, "autocast_op_cpu_us", 2);
  cost(cal, "eager_op_cpu_us", 8);
  cost(cal, "cast_kernel_floor_us", 2);
  cost(cal, "graph_launch_cpu_us", 10);
  cost(cal, "graph_node_gpu_us", 1);
  return cal;
}

TEST(WhatIfReplay, TheGpuSetsThePaceWhenTheCpuRunsAhead) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 10; ++i) b.launch(5, 5, Kind::kGemmFp32, 1000);  // 0.1 ms of CPU, 10 ms of GPU
  }
  EXPECT_NEAR(replay(b.graph()).step_ms, 10.0, 0.05);
}

TEST(WhatIfReplay, TheCpuSetsThePaceWhenItIsSlower) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 100; ++i) b.launch(45, 5, Kind::kMemoryBound, 10);  // 5 ms of CPU, 1 ms of GPU
  }
  EXPECT_NEAR(replay(b.graph()).step_ms, 5.0, 0.05);
}

TEST(WhatIfReplay, AHostSyncSerializesCpuAndGpu) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    b.cpu(3000);  // 3 ms of Python before the first launch
    for (int i = 0; i < 10; ++i) b.launch(5, 5, Kind::kGemmFp32, 500);
    b.item(5);
  }
  // 3 ms of CPU, then the GPU's 5 ms after the launch that starts it, then the read.
  EXPECT_NEAR(replay(b.graph()).step_ms, 8.02, 0.05);
}

// A launch-bound step of small fp32 GEMMs: bf16 makes the kernels faster, but
// the CPU's launches set the pace, and autocast adds CPU work per op.
TEST(WhatIfFixes, Bf16SavesNothingOnACpuBoundStep) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 100; ++i) b.launch(40, 5, Kind::kGemmFp32, 20);
  }
  const Graph g = b.graph();
  const double before = replay(g).step_ms;
  const double after = replay(with(g, {"amp"}, table())).step_ms;
  EXPECT_GE(after, before * 0.99) << "bf16 cannot speed up a step the CPU sets the pace of";
  // The same kernels behind a GPU-bound step do save.
  GraphBuilder slow;
  for (int s = 0; s < 10; ++s) {
    slow.step();
    for (int i = 0; i < 100; ++i) slow.launch(40, 5, Kind::kGemmFp32, 500);
  }
  const Graph gs = slow.graph();
  EXPECT_LT(replay(with(gs, {"amp"}, table())).step_ms, 0.5 * replay(gs).step_ms);
}

// CUDA graphs remove launch cost, but while a .item() each step makes the CPU
// wait, the Python after it still leaves the GPU idle: they help only once the
// sync is gone, and the plan says so by putting host-sync first.
TEST(WhatIfFixes, CudaGraphsHelpOnlyWithoutTheHostSync) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 200; ++i) b.launch(25, 5, Kind::kGemmFp32, 50);  // 6 ms of launches, 10 ms of GPU
    b.item(5);
    b.cpu(6000);  // 6 ms of Python after the read (logging, the next batch)
  }
  const Graph g = b.graph();
  const Calibration cal = table();
  const double plain = replay(g).step_ms;
  const double graphs = replay(with(g, {"cuda-graphs"}, cal)).step_ms;
  const double no_sync = replay(with(g, {"host-sync"}, cal)).step_ms;
  const double both = replay(with(g, {"host-sync", "cuda-graphs"}, cal)).step_ms;
  EXPECT_NEAR(plain, 16.23, 0.05);  // 6 ms of Python, 10.2 ms of GPU (1 us between kernels), the read
  EXPECT_GT(graphs, 0.98 * plain) << "graphs alone";
  EXPECT_NEAR(no_sync, 12.0, 0.3);
  EXPECT_NEAR(both, 10.0, 0.3);

  const auto prices = analyzer::whatif::price_fixes(g, analyzer::whatif::job_traits(g, false), cal, plain, 0);
  ASSERT_GE(prices.plan.size(), 2u);
  EXPECT_EQ(prices.plan[0].fixes, std::vector<std::string>{"host-sync"});
  // Then whatever removes the launch cost (graphs, or compile's launches without Python).
  EXPECT_EQ(prices.plan[1].fixes[0], "host-sync");
  EXPECT_NEAR(prices.plan[1].saving_pct, 37.5, 2);
}

// A GroupNorm conv net: channels_last speeds the convolutions but slows the
// group norms more; the advisor must not recommend it, and must say why.
TEST(WhatIfFixes, ChannelsLastIsNotRecommendedWhereGroupNormDominates) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 20; ++i) {
      b.launch(5, 5, Kind::kTranspose, 10);
      b.launch(5, 5, Kind::kConv, 100);
      b.launch(5, 5, Kind::kGroupNorm, 150);
    }
  }
  const Graph g = b.graph();
  const Calibration cal = table();
  const double plain = replay(g).step_ms;
  EXPECT_GT(replay(with(g, {"channels-last"}, cal)).step_ms, 1.1 * plain);
  const auto prices = analyzer::whatif::price_fixes(g, analyzer::whatif::job_traits(g, false), cal, plain, 0);
  for (const auto& p : prices.plan)
    for (const auto& f : p.fixes) EXPECT_NE(f, "channels-last");
  ASSERT_FALSE(prices.not_recommended.empty());
  EXPECT_NE(prices.not_recommended[0].find("group norm"), std::string::npos) << prices.not_recommended[0];
  // ATen's group norm hands NCHW tensors to the convolutions beside it: their
  // conversions stay (as copies), unlike beside batch norm below.
  size_t kept = 0;
  for (const auto& k : with(g, {"channels-last"}, cal).gpu) kept += k.kind == Kind::kTranspose && !k.removed;
  EXPECT_EQ(kept, 10u * 20u);

  // With batch norm instead, channels_last is the first fix.
  GraphBuilder bn;
  for (int s = 0; s < 10; ++s) {
    bn.step();
    for (int i = 0; i < 20; ++i) {
      bn.launch(5, 5, Kind::kTranspose, 10);
      bn.launch(5, 5, Kind::kConv, 100);
      bn.launch(5, 5, Kind::kBatchNorm, 150);
    }
  }
  const Graph gb = bn.graph();
  const auto bn_prices = analyzer::whatif::price_fixes(gb, analyzer::whatif::job_traits(gb, false), cal, replay(gb).step_ms, 0);
  bool named = false;
  for (const auto& p : bn_prices.plan) named = named || p.fixes.back() == "channels-last";
  EXPECT_TRUE(named);
  size_t left = 0;
  for (const auto& k : with(gb, {"channels-last"}, cal).gpu) left += k.kind == Kind::kTranspose && !k.removed;
  EXPECT_EQ(left, 0u);
}

// A fix that would slow the job alone stays out of the plan even where it saves
// after an earlier step (users stop part way): channels_last on a GroupNorm net
// that inductor keeps in NCHW helps only once compile generated the norms.
TEST(WhatIfFixes, APlanTakesNoFixThatAloneMightSlowTheJob) {
  GraphBuilder b;
  for (int s = 0; s < 10; ++s) {
    b.step();
    for (int i = 0; i < 20; ++i) {
      b.launch(5, 5, Kind::kTranspose, 10);
      b.launch(5, 5, Kind::kConv, 100);
      b.launch(5, 5, Kind::kTranspose, 10);
      b.launch(5, 5, Kind::kGroupNorm, 40);
      b.launch(5, 5, Kind::kMemoryBound, 20);
      b.launch(5, 5, Kind::kMemoryBound, 20);
    }
  }
  const Graph g = b.graph();
  const Calibration cal = table();
  auto traits = analyzer::whatif::job_traits(g, false);
  traits.inductor_layout = analyzer::whatif::LayoutOpt::kNo;  // a convolution narrows 2x: inductor keeps NCHW
  traits.bf16 = true;  // amp aside: this is about the layout
  const double plain = replay(g).step_ms;
  const auto prices = analyzer::whatif::price_fixes(g, traits, cal, plain, 0);
  ASSERT_FALSE(prices.plan.empty());
  EXPECT_EQ(prices.plan[0].fixes, std::vector<std::string>{"compile"});
  for (const auto& p : prices.plan)
    for (const auto& f : p.fixes) EXPECT_NE(f, "channels-last");
  bool after = false;
  for (const auto& line : prices.not_recommended)
    after = after || line.starts_with("channels-last: after compile, predicted");
  EXPECT_TRUE(after) << ::testing::PrintToString(prices.not_recommended);
  // Without the layout decision (no shapes), compile converts the layout itself.
  traits.inductor_layout = analyzer::whatif::LayoutOpt::kYes;
  const auto converted = analyzer::whatif::price_fixes(g, traits, cal, plain, 0);
  ASSERT_FALSE(converted.plan.empty());
  EXPECT_LT(converted.plan[0].step_ms, prices.plan[0].step_ms);
}

TEST(WhatIfFixes, AFixTheJobAlreadyUsesIsNotOffered) {
  GraphBuilder b;
  for (int s = 0; s < 4; ++s) {
    b.step();
    for (int i = 0; i < 10; ++i) b.launch(5, 5, Kind::kGemmHalf, 500);
  }
  const Graph g = b.graph();
  const auto traits = analyzer::whatif::job_traits(g, false);
  EXPECT_TRUE(traits.bf16);
  EXPECT_EQ(analyzer::whatif::find_fix("amp")->why_not(g, traits).rfind("already", 0), 0u);
  EXPECT_EQ(analyzer::whatif::find_fix("compile")->why_not(g, analyzer::whatif::job_traits(g, true)).rfind("already", 0), 0u);
}

}  // namespace
}  // namespace gpuscope::testing
