// Every rule fires on its planted scenario (as the top finding) and stays
// silent on the same loop without the bottleneck.
#include <gtest/gtest.h>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule.h"
#include "trace_formats/store/place_ops.h"
#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

class RuleTest : public ::testing::TestWithParam<std::string> {};

// The rules' own detection and estimates: the what-if replay, which may rank a
// fix of its own first or re-price a finding, is tested in whatif/.
analyzer::Options rules_only() {
  analyzer::Options o;
  o.replay = false;
  return o;
}

TEST_P(RuleTest, FiresAsTopFindingWhenPlanted) {
  auto a = analyze_scenario(GetParam(), true, rules_only());
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
  for (const auto* r : analyzer::cross_rank_rules())
    EXPECT_NE(std::find(planted.begin(), planted.end(), std::string(r->id)), planted.end()) << r->id;
  EXPECT_EQ(planted.size(), analyzer::all_rules().size() + analyzer::cross_rank_rules().size());
}

TEST(Rules, HealthyLoopHasNoFindingAboveFivePercent) {
  auto a = analyze_scenario("healthy");
  for (const auto& f : a.findings) EXPECT_LE(f.saving_pct, 5.0) << f.id;
}

// Three short elementwise kernels in a row form a fusion chain only when their
// ops touch the same data. As on the H200 (samples/advisor/healthy.py): GELU on
// the activations, then autocast's casts of the next layer's weights, whose
// shapes share nothing with the activations.
analyzer::Analysis elementwise_loop(const std::string& stem, const char* cast_shapes, const char* second_cast_shapes) {
  const std::string path = temp_db(stem);
  {
    Sim s(path, Sim::Config{});
    for (int i = 0; i < 12; ++i) {
      s.step_begin();
      s.op_begin("aten::mm", "[[8192,4096],[4096,4096]]", "[\"c10::BFloat16\",\"c10::BFloat16\"]");
      s.kernel(names::kGemmBf16, us(400));
      s.op_end();
      s.op_begin("aten::gelu", "[[8192,4096],[]]", "[\"c10::BFloat16\",\"\"]");
      s.kernel(names::kGelu, us(60));
      s.op_end();
      for (const char* shapes : {cast_shapes, second_cast_shapes}) {
        s.op_begin("aten::copy_", shapes, "[\"c10::BFloat16\",\"float\",\"Scalar\"]");
        s.kernel(names::kAdd, us(60));
        s.op_end();
      }
      s.step_end();
    }
    s.sync("cudaDeviceSynchronize");
    s.finish();
  }
  return analyze_path(path);
}

// Memory-bound kernels that share no data with their neighbours (an activation,
// then autocast's casts of two different weights) form no chain: no finding.
// The same kernels working on one tensor do, and the saving is all memory-bound
// time x (1 - 1/kCompileSpeedup): about 3 x 60 us a step x (1 - 1/1.8).
TEST(Rules, FusionChainsNeedSharedData) {
  auto independent = elementwise_loop("fusion-weights", "[[4096,4096],[4096,4096],[]]", "[[1024,4096],[1024,4096],[]]");
  EXPECT_EQ(find(independent, "fusion"), nullptr) << finding_list(independent);
  auto chained = elementwise_loop("fusion-activations", "[[8192,4096],[8192,4096],[]]", "[[8192,4096],[8192,4096],[]]");
  const auto* f = find(chained, "fusion");
  ASSERT_NE(f, nullptr) << finding_list(chained);
  const double memory_bound_ms = metric(*f, "memory_bound_ms_per_step");
  EXPECT_NEAR(memory_bound_ms, 0.180, 0.02);
  EXPECT_NEAR(f->traced_saving_ms, memory_bound_ms * (1 - 1 / 1.8), 0.001);
}

// torch.compile as torch 2.x records it without its own profiler (no
// dynamo_timed ranges): a cache lookup, then the compiled graph's op
// "Torch-Compiled Region: 0/N". A new N in a steady-state step is a recompile
// (the H200 recording of samples/advisor/recompile.py looks like this).
analyzer::Analysis compiled_loop(const std::string& stem, bool new_shape_each_step) {
  const std::string path = temp_db(stem);
  {
    Sim s(path, Sim::Config{});
    for (int i = 0; i < 12; ++i) {
      const bool compiles = i == 0 || new_shape_each_step;
      s.step_begin();
      s.op("TorchDynamo Cache Lookup", us(20));
      if (compiles) s.cpu(ms(200));  // Dynamo and Inductor, in Python: no ops
      s.op_begin("Torch-Compiled Region: 0/" + std::to_string(new_shape_each_step ? i : 0));
      s.kernel(names::kGemmBf16, us(400));
      s.op_end();
      s.op_begin("CompiledFunctionBackward");
      if (compiles) s.cpu(ms(100));  // the backward graph, compiled on its first call
      s.kernel(names::kGemmBf16, us(800));
      s.op_end();
      s.step_end();
    }
    s.sync("cudaDeviceSynchronize");
    s.finish();
  }
  return analyze_path(path);
}

TEST(Rules, RecompileSeenInCompiledRegionNames) {
  auto cached = compiled_loop("recompile-cached", false);
  EXPECT_EQ(find(cached, "recompile"), nullptr) << finding_list(cached);
  auto recompiling = compiled_loop("recompile-new-shapes", true);
  ASSERT_FALSE(recompiling.findings.empty());
  EXPECT_EQ(recompiling.findings.front().id, "recompile") << finding_list(recompiling);
  const analyzer::Finding* f = find(recompiling, "recompile");
  ASSERT_NE(f, nullptr);
  // 300 ms of compiling per step, plus the few microseconds of the region's first run.
  EXPECT_NEAR(f->saving_ms_per_step, 300.0, 5.0);
}

// Ops recorded in 2 steps of every 50 (record's default): the graph compiled
// again in step 5, a step without recorded ops, is first recorded in step 10,
// with or without copies of its ops placed by position in steps 6-9. Neither
// the copies nor the first recorded run (its cache lookup hit at once) is
// compile time. Each run of the graph spends 50 ms on the CPU with the GPU idle,
// which would make a recompile finding if either counted.
analyzer::Analysis unseen_recompile(const std::string& stem, bool placed_copies, bool loads_code = false) {
  const std::string path = temp_db(stem);
  {
    Sim s(path, Sim::Config{});
    s.recording().meta("torch_op_steps", "2/50");
    for (int i = 0; i < 12; ++i) {
      const bool recorded = i < 2 || i >= 10, placed = placed_copies && !recorded && i > 5;
      s.set_next_op_id(placed ? store::kPlacedOpIdBase + 1000 * i : 1000 * i + 1);
      s.step_begin();
      if (i == 0 || i == 5) s.cpu(ms(200));  // compiling: seen in step 0, unseen in step 5
      if (i == 5 && loads_code) s.api("cuModuleLoadData", us(300));  // the new graph's kernels
      if (recorded || placed) {
        s.op("TorchDynamo Cache Lookup", us(20));
        s.op_begin("Torch-Compiled Region: 0/" + std::to_string(i > 5 ? 1 : 0));
        s.cpu(ms(50));
        s.kernel(names::kGemmBf16, us(400));
        s.op_end();
        s.op_begin("CompiledFunctionBackward");
        s.kernel(names::kGemmBf16, us(800));
        s.op_end();
      } else {
        s.cpu(ms(50));
        s.kernel(names::kGemmBf16, us(400));
        s.kernel(names::kGemmBf16, us(800));
      }
      s.step_end();
    }
    s.sync("cudaDeviceSynchronize");
    s.finish();
  }
  return analyze_path(path);
}

TEST(Rules, RecompileUnseenInAStepWithoutOpsIsNotCounted) {
  for (bool placed : {true, false}) {
    const analyzer::Analysis a = unseen_recompile(placed ? "unseen-recompile-placed" : "unseen-recompile", placed);
    EXPECT_EQ(find(a, "recompile"), nullptr) << (placed ? "with placed copies: " : "without: ") << finding_list(a);
  }
}

// The same job where the unseen compile of step 5 loads its kernels
// (cuModuleLoadData, as Triton does) before they first run: the GPU idle gap
// holding the load is compile time, 200 ms of compiling plus the 50 ms the
// graph's run spends on the CPU before its first kernel (not told apart without
// ops). Each step's 50 ms of CPU with the GPU idle stays the larger finding.
TEST(Rules, RecompileInAStepWithoutOpsIsSeenByTheCodeItLoads) {
  for (bool placed : {true, false}) {
    SCOPED_TRACE(placed ? "with placed copies" : "without");
    const analyzer::Analysis a = unseen_recompile(placed ? "loaded-recompile-placed" : "loaded-recompile", placed, true);
    const analyzer::Finding* f = find(a, "recompile");
    ASSERT_NE(f, nullptr) << finding_list(a);
    EXPECT_NEAR(metric(*f, "unseen_compile_ms_total"), 250.0, 2.0);
    EXPECT_NEAR(metric(*f, "steps_with_compilation"), 1.0, 0.0);
    EXPECT_NE(f->evidence.summary.find("1 step(s) whose ops were not recorded"), std::string::npos) << f->evidence.summary;
  }
}

// Ops, and with them allocator events, recorded in the first steps only: a
// cudaMalloc in step 7 that no allocator event followed means memory grew where
// the reported peaks did not look, and the report says so. Where the event came
// (the allocator's hook on), nothing is said.
analyzer::Analysis growing_memory(const std::string& stem, bool reported) {
  const std::string path = temp_db(stem);
  {
    Sim s(path, Sim::Config{});
    s.recording().meta("torch_op_steps", "2/50");
    for (int i = 0; i < 12; ++i) {
      s.step_begin();
      if (i < 2) s.torch_memory(int64_t{1} << 30, int64_t{2} << 30);
      s.kernel(names::kGemmBf16, us(400));
      if (i == 7) {
        s.api("cudaMalloc", us(80));
        if (reported) s.torch_memory(int64_t{3} << 30, int64_t{4} << 30);
      }
      s.step_end();
    }
    s.sync("cudaDeviceSynchronize");
    s.finish();
  }
  return analyze_path(path);
}

TEST(Memory, GrowthWhereAllocatorEventsWereNotRecordedIsNoted) {
  auto has_note = [](const analyzer::Analysis& a) {
    for (const auto& n : a.notes)
      if (n.find("allocator events were not recorded") != std::string::npos) return true;
    return false;
  };
  const analyzer::Analysis unseen = growing_memory("memory-growth-unseen", false);
  EXPECT_EQ(unseen.memory.unreported_allocs, 1);
  EXPECT_TRUE(has_note(unseen));
  const analyzer::Analysis seen = growing_memory("memory-growth-seen", true);
  EXPECT_EQ(seen.memory.unreported_allocs, 0);
  EXPECT_FALSE(has_note(seen));
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
