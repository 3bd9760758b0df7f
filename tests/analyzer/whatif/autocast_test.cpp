// autocast as torch applies it, dynamo's graph breaks and the control
// stretch's check (docs/rules.md, "What-if"), on step graphs with known answers.
#include "analyzer/whatif/autocast.h"

#include <gtest/gtest.h>

#include "analyzer/untraced.h"
#include "analyzer/whatif/fixes.h"
#include "tests/analyzer/whatif/graph_builder.h"

namespace gpuscope::testing {
namespace {

using analyzer::whatif::AmpClass;
using analyzer::whatif::amp_class_of_op;
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
  flat(cal, "conv_fp32_to_bf16", 0.5);
  flat(cal, "elementwise_fp32_to_bf16", 0.5);
  flat(cal, "groupnorm_fp32_to_bf16", 0.5);  // what a speed-everything model would take
  flat(cal, "chain_fusion", 0.3);
  cost(cal, "autocast_op_cpu_us", 2);
  cost(cal, "eager_op_cpu_us", 2);
  cost(cal, "cast_kernel_floor_us", 1);
  cost(cal, "cast_kernel_us_per_mb", 0.5);
  cost(cal, "compiled_kernel_cpu_us", 5);
  cost(cal, "compiled_call_cpu_us", 10);
  return cal;
}

TEST(Autocast, ClassifiesOpsByTorchsLists) {
  EXPECT_EQ(amp_class_of_op("aten::linear"), AmpClass::kLower);
  EXPECT_EQ(amp_class_of_op("aten::cudnn_convolution"), AmpClass::kLower);
  EXPECT_EQ(amp_class_of_op("aten::scaled_dot_product_attention"), AmpClass::kLower);
  EXPECT_EQ(amp_class_of_op("aten::group_norm"), AmpClass::kFp32);
  EXPECT_EQ(amp_class_of_op("aten::native_layer_norm"), AmpClass::kFp32);
  EXPECT_EQ(amp_class_of_op("aten::_log_softmax"), AmpClass::kFp32);
  EXPECT_EQ(amp_class_of_op("aten::mse_loss"), AmpClass::kFp32);
  EXPECT_EQ(amp_class_of_op("aten::scatter_add_"), AmpClass::kNoSpeedup);
  EXPECT_EQ(amp_class_of_op("aten::index_select"), AmpClass::kNoSpeedup);
  EXPECT_EQ(amp_class_of_op("aten::embedding_dense_backward"), AmpClass::kNoSpeedup);
  EXPECT_EQ(amp_class_of_op("aten::gelu"), AmpClass::kKeep);
  EXPECT_EQ(amp_class_of_op("aten::add"), AmpClass::kKeep);
  EXPECT_EQ(amp_class_of_op("aten::_cudnn_rnn"), AmpClass::kRnn);
  EXPECT_EQ(amp_class_of_op("torchvision::roi_align"), AmpClass::kFp32);
  // Autograd nodes take their forward op's class.
  EXPECT_EQ(amp_class_of_op("autograd::engine::evaluate_function: AddmmBackward0"), AmpClass::kLower);
  EXPECT_EQ(amp_class_of_op("NativeGroupNormBackward0"), AmpClass::kFp32);
  EXPECT_EQ(amp_class_of_op("EmbeddingBackward0"), AmpClass::kNoSpeedup);
  EXPECT_EQ(amp_class_of_op("SiluBackward0"), AmpClass::kKeep);
  EXPECT_EQ(analyzer::whatif::forward_op_of_node("ScaledDotProductEfficientAttentionBackward0"),
            "scaled_dot_product_efficient_attention");
  EXPECT_EQ(analyzer::whatif::forward_op_of_node("aten::mm"), "");
}

TEST(Autocast, CountsTheElementsOfEachInput) {
  using analyzer::whatif::input_elements;
  EXPECT_EQ(input_elements("[[32,128,768],[3072,768],[3072]]", 0), 32.0 * 128 * 768);
  EXPECT_EQ(input_elements("[[32,128,768],[3072,768],[3072]]", 1), 3072.0 * 768);
  EXPECT_EQ(input_elements("[[32,128,768],[3072,768],[3072]]", 2), 3072.0);
  EXPECT_EQ(input_elements("[[64,64,512],[[2048,512],[2048]],[],[]]", 1), 2048.0 * 512 + 2048);
  EXPECT_EQ(input_elements("[[],[4,4]]", 0), 0.0);
  EXPECT_EQ(input_elements("[[],[4,4]]", 1), 16.0);
  EXPECT_EQ(input_elements("[[4,4]]", 3), 0.0);
  EXPECT_EQ(input_elements("garbage", 0), 0.0);
  EXPECT_EQ(analyzer::whatif::parameter_elements("aten::linear", "[[8,16],[32,16],[32]]"), 32.0 * 16 + 32);
  EXPECT_EQ(analyzer::whatif::parameter_elements("aten::bmm", "[[8,16,16],[8,16,16]]"), 0.0);
}

// A block as a UNet or a graph network writes it: conv -> GroupNorm -> SiLU ->
// scatter, forward then backward, GPU-bound.
Graph block_graph() {
  GraphBuilder b;
  for (int s = 0; s < 6; ++s) {
    b.step();
    uint32_t op = static_cast<uint32_t>(s * 100);
    b.launch_op(5, 5, Kind::kConv, 1000, AmpClass::kLower, ++op, false, 1e6, 1e4);
    b.launch_op(5, 5, Kind::kGroupNorm, 400, AmpClass::kFp32, ++op, false, 1e6);
    b.launch_op(5, 5, Kind::kMemoryBound, 200, AmpClass::kKeep, ++op);
    b.launch_op(5, 5, Kind::kMemoryBound, 300, AmpClass::kNoSpeedup, ++op);
    b.launch_op(5, 5, Kind::kMemoryBound, 300, AmpClass::kNoSpeedup, ++op, true);
    b.launch_op(5, 5, Kind::kMemoryBound, 200, AmpClass::kKeep, ++op, true);
    b.launch_op(5, 5, Kind::kGroupNorm, 600, AmpClass::kFp32, ++op, true);
    b.launch_op(5, 5, Kind::kConv, 2000, AmpClass::kLower, ++op, true);
  }
  return b.graph();
}

TEST(Autocast, OnlyLowerPrecisionOpsAndWhatFollowsThemSpeedUp) {
  const Calibration cal = table();
  const Graph base = block_graph();
  const Graph amp = with(base, {"amp"}, cal);
  // Per step: the convolutions halve (3000 -> 1500 us); GroupNorm runs in fp32
  // after an upcast of the conv's bf16 output (2 x 0.5 us/MB x 4 MB = 4 us
  // more); SiLU after GroupNorm stays fp32; the scatters keep their time; the
  // weight and input casts of the conv add about 2 x (1 + 1 + 2) us.
  const double before = replay(base).step_ms, after = replay(amp).step_ms;
  EXPECT_NEAR(before, 5.0, 0.05);
  EXPECT_GT(after, 3.5);
  EXPECT_LT(after, 3.6);
  for (const auto& k : amp.gpu) {
    if (k.kind == Kind::kGroupNorm) {
      EXPECT_GE(k.dur, 400e3);
    }
  }
  // The old model (every kernel at its bf16 speed) would have halved them all.
  Graph no_ops = base;
  for (auto& k : no_ops.gpu) k.amp = AmpClass::kUnknown;
  EXPECT_LT(replay(with(no_ops, {"amp"}, cal)).step_ms, 2.6);
}

TEST(Autocast, PointwiseAfterAMatmulRunsInBf16) {
  GraphBuilder b;
  for (int s = 0; s < 4; ++s) {
    b.step();
    const auto op = static_cast<uint32_t>(s * 10);
    b.launch_op(5, 5, Kind::kGemmFp32, 1000, AmpClass::kLower, op + 1, false, 1e5, 1e4);
    b.launch_op(5, 5, Kind::kMemoryBound, 1000, AmpClass::kKeep, op + 2);  // a GELU on the bf16 output
  }
  const Graph amp = with(b.graph(), {"amp"}, table());
  EXPECT_NEAR(amp.gpu[1].dur, 500e3, 1);
}

TEST(Compile, AGraphBreakEndsTheChainAndStaysEager) {
  GraphBuilder b;
  for (int s = 0; s < 4; ++s) {
    b.step();
    const auto op = static_cast<uint32_t>(s * 10);
    for (int i = 0; i < 3; ++i) b.launch_op(5, 5, Kind::kMemoryBound, 100, AmpClass::kKeep, op + 1 + i);
    b.launch_op(5, 5, Kind::kRnn, 100, AmpClass::kRnn, op + 5, false, 0, 0, true);  // nn.LSTM: dynamo breaks
    for (int i = 0; i < 3; ++i) b.launch_op(5, 5, Kind::kMemoryBound, 100, AmpClass::kKeep, op + 6 + i);
  }
  const Graph g = with(b.graph(), {"compile"}, table());
  // Per step: two fused chains and the eager RNN kernel.
  size_t left = 0, triton = 0;
  for (const auto& k : g.gpu) {
    left += !k.removed;
    triton += !k.removed && k.kind == Kind::kTriton;
  }
  EXPECT_EQ(left, 4u * 3);
  EXPECT_EQ(triton, 4u * 2);
  for (const auto& k : g.gpu) {
    if (k.graph_break) {
      EXPECT_DOUBLE_EQ(k.dur, 100e3);
    }
  }
  // The break's launch keeps its eager CPU time; the launch after it pays a compiled graph's call.
  EXPECT_DOUBLE_EQ(g.cpu[3].gap, 5e3);
  EXPECT_GE(g.cpu[4].gap, 10e3);
  // CUDA graphs after compile (reduce-overhead) capture only the compiled stretches.
  const Graph graphs = with(b.graph(), {"compile", "cuda-graphs"}, table());
  EXPECT_GT(graphs.cpu[3].dur, 0);
}

TEST(Compile, AFusedChainTakesAtLeastItsLargestPass) {
  GraphBuilder b;
  for (int s = 0; s < 4; ++s) {
    b.step();
    const auto op = static_cast<uint32_t>(s * 10);
    b.launch_op(5, 5, Kind::kMemoryBound, 1000, AmpClass::kKeep, op + 1);  // one large reduction
    for (int i = 0; i < 3; ++i) b.launch_op(5, 5, Kind::kMemoryBound, 20, AmpClass::kKeep, op + 2 + i);
  }
  const Graph g = with(b.graph(), {"compile"}, table());
  EXPECT_NEAR(g.gpu[0].dur, 1000e3, 1);  // not (1000 + 60) x 0.3
}

TEST(Compile, MatmulShapesGiveFlopsAndAlignment) {
  using analyzer::whatif::matmul_shape;
  // A GPT's vocabulary projection: N = 50257 is off the 8-element alignment of bf16.
  const auto head = matmul_shape("aten::linear", "[[16,1024,1024],[50257,1024],[]]", 8);
  EXPECT_DOUBLE_EQ(head.flops, 2.0 * 16 * 1024 * 50257 * 1024);
  EXPECT_TRUE(head.misaligned);
  const auto mlp = matmul_shape("aten::addmm", "[[3072],[16384,1024],[1024,3072],[],[]]", 8);
  EXPECT_DOUBLE_EQ(mlp.flops, 2.0 * 16384 * 1024 * 3072);
  EXPECT_FALSE(mlp.misaligned);
  EXPECT_DOUBLE_EQ(matmul_shape("aten::bmm", "[[8,16,32],[8,32,64]]", 8).flops, 2.0 * 8 * 16 * 64 * 32);
  EXPECT_TRUE(matmul_shape("aten::mm", "[[30,64],[64,64]]", 4).misaligned);  // M = 30
  EXPECT_DOUBLE_EQ(matmul_shape("aten::add", "[[4,4],[4,4],[]]", 8).flops, 0.0);
  EXPECT_DOUBLE_EQ(matmul_shape("aten::mm", "[[30,64", 8).flops, 0.0);  // damaged
}

// Inductor pads a matmul off cuBLAS's alignment: its kernels, forward and the
// backward ones cuBLAS names misaligned, run at the job's aligned throughput.
TEST(Compile, AMisalignedMatmulRunsAtTheAlignedThroughput) {
  std::vector<std::string> names = {"", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                                    "cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1",
                                    "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1",
                                    "cutlass_80_simt_sgemm_256x128_8x4_nt_align1"};
  GraphBuilder b;
  for (int s = 0; s < 4; ++s) {
    b.step();
    const auto op = static_cast<uint32_t>(s * 10);
    b.launch_op(5, 5, Kind::kGemmHalf, 1000, AmpClass::kLower, op + 1);  // 4 GFLOP in 1 ms: 4e12 flop/s
    b.launch_op(5, 5, Kind::kGemmHalf, 2000, AmpClass::kLower, op + 2);  // 2 GFLOP in 2 ms: 1e12 flop/s
    b.launch_op(5, 5, Kind::kGemmHalf, 4000, AmpClass::kLower, op + 2, true);  // its backward
    b.launch_op(5, 5, Kind::kGemmFp32, 4000, AmpClass::kLower, op + 3, true);  // SIMT "align1": not misaligned
  }
  Graph g = b.graph();
  g.names = &names;
  for (size_t i = 0; i < g.gpu.size(); ++i) {
    auto& k = g.gpu[i];
    k.half = k.kind == Kind::kGemmHalf;
    switch (i % 4) {
      case 0: k.name = 1, k.flops = 4e9; break;
      case 1: k.name = 2, k.flops = 2e9, k.misaligned = true; break;
      case 2: k.name = 3; break;
      default: k.name = 4; break;
    }
  }
  const Graph c = with(g, {"compile"}, table());
  EXPECT_NEAR(c.gpu[0].dur, 1000e3, 1);
  EXPECT_NEAR(c.gpu[1].dur, 500e3, 1);   // 2000 us x (1e12 / 4e12)
  EXPECT_NEAR(c.gpu[2].dur, 1000e3, 1);  // backward, by cuBLAS's name
  EXPECT_NEAR(c.gpu[3].dur, 4000e3, 1);
  // Small matmuls (under 1 GFLOP a call) are bound by latency: nothing is padded.
  for (auto& k : g.gpu) k.flops = k.flops > 0 ? 1e6 : 0;
  const Graph small = with(g, {"compile"}, table());
  EXPECT_NEAR(small.gpu[1].dur, 2000e3, 1);
}

TEST(ControlStretch, AnUntracedStepInsideCompilationIsNotUsed) {
  using analyzer::implausible_untraced;
  // torch.compile's first steps inside the control stretch: 979 ms against 60 ms traced.
  EXPECT_NE(implausible_untraced(979, 60, 0), "");
  // A DataLoader draining the queue its workers filled during warm-up: 37 ms
  // untraced against 50 ms traced, of which 47 ms waiting for data.
  EXPECT_NE(implausible_untraced(37, 50, 47), "");
  // A CPU-bound job that tracing slowed by 65 %: plausible.
  EXPECT_EQ(implausible_untraced(11.0, 18.2, 0), "");
  // GPU-bound: equal within noise; a loader-bound job equal to its loader's pace.
  EXPECT_EQ(implausible_untraced(60.4, 60.8, 0), "");
  EXPECT_EQ(implausible_untraced(48, 50, 47), "");
}

}  // namespace
}  // namespace gpuscope::testing
