// Findings about the job as it runs untraced (analyzer/untraced.cpp): a
// recording whose traced steps are slower than its untraced ones, because the
// tracer lengthens the CPU side, must not blame the CPU for idle time the
// tracer made; a job that idles untraced too keeps its finding.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "trace_formats/store/rows.h"
#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

// Writes 25 steps: 0-2 traced (warm-up), 3-10 untraced (the control stretch,
// measured on the GPU from drain to drain: a range of source untraced_drained
// when `drained`), 11-24 traced again; each step's work from `traced` or `untraced`.
template <class Traced, class Untraced>
void control_stretch_steps(Sim& s, Traced traced, Untraced untraced, bool drained = true) {
  int64_t window = s.now(), untraced_start = 0;
  for (int i = 0; i < 25; ++i) {
    if (i == 3) {
      s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window, s.now());
      untraced_start = s.now();
    }
    if (i == 11) {
      if (drained)
        s.range(store::kRangeSourceUntracedDrained, std::string(store::kUntracedDrainedName), untraced_start, s.now());
      window = s.now();
    }
    s.step_begin();
    if (i < 3 || i > 10)
      traced();
    else
      untraced();
    s.step_end();
  }
  s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window, s.now());
  s.finish();
}

// A job with 10 ms of kernels a step. Traced, the CPU needs `traced_cpu_ms`
// a step (Python the tracer slowed down), more than the GPU, which idles for
// the difference; untraced it needs `untraced_cpu_ms`. `also` adds rows to
// each traced step after its kernel.
std::string control_stretch_recording(const std::string& name, double traced_cpu_ms, double untraced_cpu_ms,
                                      bool drained = true, const std::function<void(Sim&)>& also = {}) {
  const std::string path = temp_db(name);
  Sim s(path, Sim::Config{});
  control_stretch_steps(
      s,
      [&] {
        s.op_begin("aten::mm");
        s.kernel(names::kGemmBf16, ms(10));
        s.op_end();
        if (also) also(s);
        s.cpu(ms(traced_cpu_ms));
      },
      [&] { s.cpu(ms(std::max(10.0, untraced_cpu_ms))); },  // the GPU's 10 ms, untraced and unseen
      drained);
  return path;
}

// Traced steps take ~18 ms (10 ms of kernels, 8 ms more of CPU while the GPU
// idles); untraced the job runs at the GPU's 10 ms. Without the correction
// low-utilization would claim ~8 ms (44 %).
TEST(Untraced, IdleTheTracerMadeIsNotBlamedOnTheJob) {
  auto a = analyze_path(control_stretch_recording("untraced_gpu_bound", 18, 2));
  EXPECT_EQ(a.summary.untraced_method, "gpu_drained");
  EXPECT_NEAR(a.summary.untraced_step_ms, 10.0, 0.2);
  EXPECT_GT(a.summary.traced_step_ms, 17.0);
  EXPECT_NEAR(a.summary.tracing_cost_pct, 100 * (a.summary.traced_step_ms / a.summary.untraced_step_ms - 1), 0.01);
  EXPECT_LT(a.summary.cpu_idle_factor, 0.05);
  for (const auto& f : a.findings) EXPECT_LT(f.saving_pct, 5.0) << f.id << " " << f.saving_pct;
  // The control stretch's warm-up and the first step after it are left out.
  EXPECT_EQ(a.summary.first_step, 12);
  EXPECT_EQ(a.summary.steps, 13);
  bool said = false;
  for (const auto& n : a.notes) said = said || n.find("before the untraced control stretch") != std::string::npos;
  EXPECT_TRUE(said);
}

// The same traced steps, but the job is as slow untraced (18 ms): the idle time
// is the job's own, and the finding keeps its full size, judged against 18 ms.
TEST(Untraced, IdleTheJobHasUntracedIsKept) {
  auto a = analyze_path(control_stretch_recording("untraced_cpu_bound", 18, 18));
  EXPECT_NEAR(a.summary.untraced_step_ms, 18.0, 0.3);
  EXPECT_NEAR(a.summary.cpu_idle_factor, 1.0, 0.05);
  const analyzer::Finding* f = find(a, "low-utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->saving_ms_per_step, 8.0, 0.5);
  EXPECT_NEAR(f->saving_pct, 100 * 8.0 / 18.0, 3.0);
}

// Half of the traced idle time exists untraced (14 ms against 18 ms traced):
// the finding claims half, as a share of the untraced step.
TEST(Untraced, FindingsClaimOnlyTheIdleTimeThatExistsUntraced) {
  auto a = analyze_path(control_stretch_recording("untraced_half", 18, 14));
  const analyzer::Finding* f = find(a, "low-utilization");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->traced_saving_ms, 8.0, 0.5);
  EXPECT_NEAR(f->saving_ms_per_step, 4.0, 0.5);
  EXPECT_NEAR(f->saving_pct, 100 * 4.0 / 14.0, 3.0);
}

// Without the drained range (CUPTI kept initialized, an older driver) the
// untraced steps' own CPU bounds stand in for the untraced step.
TEST(Untraced, CpuStepsStandInWithoutTheGpuMeasure) {
  auto a = analyze_path(control_stretch_recording("untraced_cpu_steps", 18, 2, false));
  EXPECT_EQ(a.summary.untraced_method, "cpu_steps");
  EXPECT_NEAR(a.summary.untraced_step_ms, 10.0, 0.2);
}

// 200 kernels of 20 us a step, the GPU leaving 2 us between two queued back to
// back. Traced, the first 50 are launched faster than they run and the other
// 150 each wait ~26 us for the CPU (launch-bound, ~7.2 ms a step); untraced a
// step takes `untraced_ms`.
std::string launch_gap_recording(const std::string& name, double untraced_ms) {
  const std::string path = temp_db(name);
  Sim::Config cfg;
  cfg.kernel_gap_ns = us(2);
  Sim s(path, cfg);
  control_stretch_steps(
      s,
      [&] {
        for (int k = 0; k < 200; ++k) {
          if (k >= 50) s.cpu(us(40));
          s.kernel(names::kAdd, us(20));
        }
        s.cpu(std::max<int64_t>(0, s.gpu_idle_at() - s.now()));  // the step ends with its work
      },
      [&] { s.cpu(ms(untraced_ms)); });
  return path;
}

// Untraced the job runs at its GPU time plus the gaps back-to-back kernels
// leave (4.0 + 0.4 ms): the idle is the GPU's own, which CUDA graphs do not
// remove, so launch-bound claims nothing.
TEST(Untraced, TheGapsBetweenQueuedKernelsAreNotLaunchOverhead) {
  auto a = analyze_path(launch_gap_recording("untraced_gap_floor", 4.4));
  EXPECT_NEAR(a.summary.kernel_gap_floor_ms, 0.4, 0.05);
  EXPECT_NEAR(a.summary.untraced_step_ms, 4.4, 0.1);
  EXPECT_GT(a.summary.cpu_idle_factor, 0.1);  // the untraced step has idle time ...
  EXPECT_LT(a.summary.launch_idle_factor, 0.02);  // ... but none between launches
  EXPECT_EQ(find(a, "launch-bound"), nullptr);
}

// Untraced the step takes 6 ms: 2 ms of idle, of which 1.6 above the gaps
// back-to-back kernels leave. launch-bound claims those 1.6 ms.
TEST(Untraced, LaunchOverheadAboveTheGapFloorIsKept) {
  analyzer::Options no_replay;
  no_replay.replay = false;  // the carry-over itself, not the what-if's re-pricing
  auto a = analyze_path(launch_gap_recording("untraced_launch_kept", 6.0), no_replay);
  const analyzer::Finding* f = find(a, "launch-bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(f->saving_ms_per_step, 1.6, 0.2);
}

// `record --trace ...,overhead`: CUPTI's overhead records are ranges of
// source tracer_overhead. The report sums the part of each inside the analysed
// steps by kind (a flush in a warm-up step does not count), and they are not
// taken for the job's own ranges.
TEST(Untraced, RecordedTracerOverheadIsSummedPerStep) {
  auto a = analyze_path(control_stretch_recording("tracer_overhead", 2, 10, true, [](Sim& s) {
    s.range(schema::range_source::tracer_overhead, "CUPTI overhead: buffer flush", s.now(), s.now() + ms(1));
  }));
  ASSERT_EQ(a.summary.tracer_overhead.size(), 1u);
  const auto& o = a.summary.tracer_overhead[0];
  EXPECT_EQ(o.name, "CUPTI overhead: buffer flush");
  EXPECT_EQ(o.count, a.summary.steps);  // one in each analysed step, none from the warm-up counted
  EXPECT_NEAR(o.ms_per_step, 1.0, 1e-6);
  EXPECT_NEAR(a.summary.tracer_overhead_ms_per_step, 1.0, 1e-6);
  EXPECT_NE(analyzer::to_text(a).find("tracer overhead recorded: 1.000 ms a step (CUPTI overhead: buffer flush 1.000 ms in "),
            std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(analyzer::to_json(a))["summary"]["tracer_overhead"]["kinds"][0]["count"], a.summary.steps);

  // Without such records the report says nothing about them.
  auto plain = analyze_path(control_stretch_recording("no_tracer_overhead", 12, 10));
  EXPECT_TRUE(plain.summary.tracer_overhead.empty());
  EXPECT_EQ(analyzer::to_text(plain).find("tracer overhead recorded"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(analyzer::to_json(plain))["summary"].contains("tracer_overhead"));
}

// A recording without untraced steps says why it cannot judge, in one line of
// every report format.
TEST(Untraced, UnknownSaysWhy) {
  auto a = analyze_scenario("healthy");
  EXPECT_EQ(a.summary.untraced_step_ms, 0);
  EXPECT_NE(a.summary.untraced_unknown.find("every step was traced"), std::string::npos) << a.summary.untraced_unknown;
  EXPECT_NE(analyzer::to_text(a).find("untraced step time unknown: every step was traced"), std::string::npos);
  EXPECT_NE(analyzer::to_json(a).find("\"unknown_why\":"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::testing
