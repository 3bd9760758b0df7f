// Step detection, selection (--steps, warm-up), device and process choice.
#include <gtest/gtest.h>

#include "analyzer/report/format.h"
#include "trace_formats/common/error.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"
#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

using analyzer::Options;
using analyzer::StepSource;

TEST(Steps, StepTableWithWarmupSkipped) {
  auto a = analyze_scenario("healthy");
  EXPECT_EQ(a.summary.step_source, StepSource::kOptimizerStep);
  EXPECT_EQ(a.summary.steps_recorded, 12);
  EXPECT_EQ(a.summary.warmup_skipped, 1);
  EXPECT_EQ(a.summary.steps, 11);
  EXPECT_EQ(a.summary.first_step, 1);
  EXPECT_EQ(a.summary.last_step, 11);
  EXPECT_TRUE(a.summary.outlier_steps.empty());
  EXPECT_GT(a.summary.step_ms_median, 10.0);
  EXPECT_LE(a.summary.step_ms_median, a.summary.step_ms_p95);
}

// A GPU-bound loop that never synchronizes: the CPU leaves each step after
// ~0.1 ms while its 30 ms kernel runs much later. A step lasts until its GPU
// work ends (as on the H200: amp.py's optimizer steps were 2 ms on the CPU and
// 30.7 ms in truth), so the median is the step period, not the CPU's.
TEST(Steps, StepsLastUntilTheirGpuWorkEnds) {
  const std::string path = temp_db("cpu_runs_ahead");
  {
    Sim s(path, Sim::Config{});
    for (int i = 0; i < 12; ++i) {
      s.step_begin();
      s.op_begin("aten::mm");
      s.kernel("gemm_kernel", ms(30));
      s.op_end();
      s.cpu(us(100));
      s.step_end();
    }
    s.sync("cudaDeviceSynchronize");
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_NEAR(a.summary.step_ms_median, 30.0, 0.1);
  EXPECT_NE(a.summary.step_source_detail.find("until its GPU work ended"), std::string::npos)
      << a.summary.step_source_detail;
  // Every step's kernel is inside the analysed steps, and the GPU is busy all along.
  EXPECT_GT(a.summary.gpu_utilization, 0.98);
}

// `gpuscope record --sample`: only steps wholly inside a traced stretch
// (range source 7) are analysed; the ones between say nothing about the GPU.
TEST(Steps, SampledRecordingAnalysesOnlyTracedSteps) {
  const std::string path = temp_db("sampled");
  {
    Sim s(path, Sim::Config{});
    int64_t window_start = 0;
    for (int i = 0; i < 30; ++i) {
      const bool traced = (i / 5) % 2 == 0;  // steps 0-4, 10-14, 20-24
      if (traced && i % 5 == 0) window_start = s.now();
      s.step_begin();
      if (traced) {
        s.op_begin("aten::mm");
        s.kernel("gemm_kernel", ms(2));
        s.op_end();
        s.sync();
      }
      s.cpu(ms(traced ? 1 : 3));  // untraced steps look idle and slow: they must not count
      // The first step of a later stretch pays for CUPTI resuming after its teardown.
      if (traced && i % 5 == 0 && i > 0) s.cpu(ms(20));
      s.step_end();
      if (traced && i % 5 == 4) s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window_start, s.now());
    }
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_EQ(a.summary.steps_recorded, 30);
  EXPECT_EQ(a.summary.steps_untraced, 15);
  EXPECT_EQ(a.summary.warmup_skipped, 3);  // step 0 (warm-up), 10 and 20 (resuming)
  EXPECT_EQ(a.summary.steps, 12);
  EXPECT_LT(a.summary.step_ms_max, 5.0);  // no resume step among the analysed ones
  EXPECT_GT(a.summary.gpu_utilization, 0.5);
  bool noted = false, said_resume = false;
  for (const auto& n : a.notes) {
    noted = noted || (n.find("sampled recording: 15 of 30 steps") != std::string::npos &&
                      n.find("a memory peak between traced stretches is not seen") != std::string::npos);
    said_resume = said_resume || n.find("skipped the first step of 2 traced stretch(es) after the first") != std::string::npos;
  }
  EXPECT_TRUE(noted);
  EXPECT_TRUE(said_resume);

  Options o;
  analyzer::parse_step_range("5-9", o);
  try {
    analyze_path(path, o);
    ADD_FAILURE() << "--steps 5-9 selects only untraced steps";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("traced steps: 0-4, 10-14, 20-24"), std::string::npos) << e.what();
  }
  analyzer::parse_step_range("3-12", o);
  EXPECT_EQ(analyze_path(path, o).summary.steps, 5);  // 3, 4, 10, 11, 12
}

// A capture (gpuscope.profile, trigger) whose block ended inside its control
// stretch: its steps ran untraced and no sampling window was written. analyze
// says no step was traced, in one line, rather than "every step was traced"
// over the untraced steps (issue 50, item 7); the same file with the traced
// stretch's window is analysed as before.
TEST(Steps, ACaptureThatNeverBeganTracingSaysNoStepWasTraced) {
  for (const bool traced : {false, true}) {
    SCOPED_TRACE(traced ? "with its traced stretch" : "ended inside the control stretch");
    const std::string path = temp_db(traced ? "capture_traced" : "capture_control_only");
    {
      Sim s(path, Sim::Config{});
      const int64_t window_start = s.now();
      for (int i = 0; i < 14; ++i) {
        s.step_begin();
        s.cpu(ms(3));
        s.step_end();
      }
      if (traced) s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window_start, s.now());
      s.finish();
    }
    {
      store::Writer w(path);
      w.begin();
      w.set_meta(meta_key::kCaptureTrigger, "gpuscope_capture_start");
      w.commit();
    }
    if (traced) {
      EXPECT_EQ(analyze_path(path).summary.steps_recorded, 14);
      continue;
    }
    try {
      analyze_path(path);
      ADD_FAILURE() << "a capture with no traced step was analysed";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(": no step was traced: the capture ended inside its control stretch, after 14 untraced "
                          "steps"),
                std::string::npos)
          << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// A sampled recording also tells what tracing cost the job: its traced steps
// against its untraced ones, as the job saw them (step bounds, not extended to
// the GPU). Here traced steps take 6 ms (a 1 ms kernel waited for, then 5 ms on
// the CPU) and untraced ones 5 ms.
TEST(Steps, SampledRecordingSaysWhatTracingCostTheJob) {
  const std::string path = temp_db("sampled_cost");
  {
    Sim s(path, Sim::Config{});
    int64_t window_start = 0;
    for (int i = 0; i < 40; ++i) {
      const bool traced = (i / 5) % 2 == 0;
      if (traced && i % 5 == 0) window_start = s.now();
      s.step_begin();
      if (traced) {
        s.kernel("gemm_kernel", ms(1));
        s.sync();
      }
      s.cpu(ms(5));
      s.step_end();
      if (traced && i % 5 == 4) s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window_start, s.now());
    }
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_NEAR(a.summary.traced_step_ms_median, 6.0, 0.05);
  EXPECT_NEAR(a.summary.untraced_step_ms_median, 5.0, 0.05);
  // The cost is said once, in the first line (no drained stretch here: the
  // untraced steps' CPU bounds), and the notes call the recording sampled.
  EXPECT_EQ(a.summary.untraced_method, "cpu_steps");
  EXPECT_NEAR(a.summary.untraced_step_ms, 5.0, 0.05);
  EXPECT_FALSE(a.summary.control_stretch);
  const std::string first = analyzer::report::untraced_line(a);
  EXPECT_NE(first.find("tracing cost +2"), std::string::npos) << first;
  bool sampled_note = false;
  for (const auto& n : a.notes) {
    EXPECT_EQ(n.find("tracing cost on this job"), std::string::npos) << n;
    sampled_note = sampled_note || n.starts_with("sampled recording: ");
  }
  EXPECT_TRUE(sampled_note);
  // A full recording has no such figures.
  EXPECT_EQ(analyze_scenario("healthy", true).summary.untraced_step_ms_median, 0);
}

TEST(Steps, ExplicitRangeKeepsWarmup) {
  Options o;
  analyzer::parse_step_range("0-3", o);
  auto a = analyze_scenario("healthy", true, o);
  EXPECT_EQ(a.summary.steps, 4);
  EXPECT_EQ(a.summary.warmup_skipped, 0);
  ASSERT_EQ(a.summary.outlier_steps.size(), 1u);
  EXPECT_EQ(a.summary.outlier_steps[0], 0);  // the warm-up step is long
  // Warm-up allocations are now inside the analysed steps.
  EXPECT_EQ(a.memory.cuda_allocs, 3);
}

TEST(Steps, RangeOutsideTheRecordingIsAnError) {
  Options o;
  analyzer::parse_step_range("40-50", o);
  try {
    analyze_scenario("healthy", true, o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no steps numbered 40-50 (the recording has steps 0-11)"), std::string::npos)
        << e.what();
  }
}

TEST(Steps, ParseStepRange) {
  Options o;
  analyzer::parse_step_range("5-", o);
  EXPECT_EQ(*o.first_step, 5);
  EXPECT_FALSE(o.last_step);
  Options p;
  analyzer::parse_step_range("-7", p);
  EXPECT_FALSE(p.first_step);
  EXPECT_EQ(*p.last_step, 7);
  Options q;
  analyzer::parse_step_range("3", q);
  EXPECT_EQ(*q.first_step, 3);
  EXPECT_EQ(*q.last_step, 3);
  for (const char* bad : {"", "-", "a-b", "5-3", "1-2-3", "x", "1.5"}) {
    Options r;
    EXPECT_THROW(analyzer::parse_step_range(bad, r), Error) << bad;
  }
}

TEST(Steps, NvtxRangesWhenNoStepTable) {
  auto a = analyze_scenario("nvtx_steps");
  EXPECT_EQ(a.summary.step_source, StepSource::kRanges);
  EXPECT_EQ(a.summary.step_source_detail, "repeating range \"train_step\"");
  EXPECT_EQ(a.summary.steps_recorded, 6);
  EXPECT_EQ(a.summary.steps, 5);
  // An NVTX range named after a data loader counts as a DataLoader wait.
  EXPECT_GT(a.idle.causes[static_cast<size_t>(analyzer::IdleCause::kDataLoader)].ms_per_step, 4.5);
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings.front().id, "dataloader-stall");
  bool noted = false;
  for (const auto& n : a.notes) noted = noted || n.find("no step table") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Steps, RangesWinOverAStepTableThatMissesMostSteps) {
  auto a = analyze_scenario("graph_replay");
  EXPECT_EQ(a.summary.step_source, StepSource::kRanges);
  EXPECT_EQ(a.summary.steps_recorded, 10);
  EXPECT_NE(a.summary.step_source_detail.find("the step table has only 3 steps"), std::string::npos)
      << a.summary.step_source_detail;
}

// A loop whose whole step became one CUDA graph replay after its warm-up: the
// collector's graph_launch steps go on where the plugin's optimizer steps end.
TEST(Steps, GraphReplayStepsContinueThePluginsSteps) {
  auto a = analyze_scenario("graph_steps");
  EXPECT_EQ(a.summary.step_source, StepSource::kGraphLaunch);
  EXPECT_EQ(a.summary.steps_recorded, 12);
  EXPECT_EQ(a.summary.step_source_detail, "step table (optimizer steps, then one CUDA graph replay per step)");
}

TEST(Steps, WholeRecordingWhenNothingRepeats) {
  auto a = analyze_scenario("no_steps");
  EXPECT_EQ(a.summary.step_source, StepSource::kWholeRecording);
  EXPECT_EQ(a.summary.steps, 1);
  EXPECT_EQ(a.summary.warmup_skipped, 0);
  EXPECT_GT(a.summary.kernels, 0);
  // The note says how to get steps.
  bool told = false;
  for (const auto& n : a.notes) told = told || n.find("`gpuscope setup torch`") != std::string::npos;
  EXPECT_TRUE(told);
  Options o;
  o.first_step = 0;
  EXPECT_THROW(analyze_scenario("no_steps", true, o), Error);
}

// Without a step table or ranges, the steps come from the kernel launch
// sequence. The loop's 6 layers repeat a GEMM and a GELU every 2 kernels in the
// forward pass (a GEMM every kernel in backward), but the step is the whole
// sequence of 27 kernels and the batch's copy; the steps match those of the
// step table.
TEST(Steps, LaunchSequenceWithoutAStepTable) {
  auto table = analyze_scenario("healthy");
  auto a = analyze_scenario("no_step_table");
  EXPECT_EQ(a.summary.step_source, StepSource::kLaunchSequence);
  EXPECT_NE(a.summary.step_source_detail.find("repeating every 28 launches"), std::string::npos)
      << a.summary.step_source_detail;
  EXPECT_GE(a.summary.steps, table.summary.steps - 2);
  EXPECT_NEAR(a.summary.step_ms_median, table.summary.step_ms_median, 0.02 * table.summary.step_ms_median);
  Options o;
  o.first_step = 2;
  o.last_step = 4;
  EXPECT_EQ(analyze_scenario("no_step_table", true, o).summary.steps, 3) << "--steps selects among them";
}

// A sampled recording without a step table whose traced stretches are shorter
// than a step: every step from the launch sequence straddles an untraced
// stretch, so the recording is analysed whole, as before such steps existed.
TEST(Steps, LaunchSequenceStepsThatStraddleUntracedStretchesFallBackToTheWholeRecording) {
  const std::string path = temp_db("sampled_no_table");
  {
    Sim s(path, Sim::Config{});
    s.write_steps = false;
    for (int i = 0; i < 12; ++i) {
      const bool traced = i % 2 == 0;
      const int64_t window_start = s.now();
      if (traced) {
        s.kernel("gemm_kernel", ms(2));
        s.kernel("relu_kernel", us(200));
        s.sync();
      }
      s.cpu(ms(3));
      if (traced) s.range(store::kRangeSourceSamplingWindow, std::string(store::kSamplingWindowName), window_start, window_start + ms(1));
    }
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_EQ(a.summary.step_source, StepSource::kWholeRecording) << a.summary.step_source_detail;
  EXPECT_EQ(a.summary.steps, 1);
}

// Steps without a step table: a pause, the batch's copy, `layers` alike
// (a GEMM and a GELU each), a softmax when `head`, a sync.
void layer_steps(Sim& s, int steps, int layers, int64_t pause, bool head) {
  s.write_steps = false;
  for (int i = 0; i < steps; ++i) {
    s.cpu(pause);
    s.copy(1, 2, 3, 1 << 20, us(30));
    for (int l = 0; l < layers; ++l) {
      s.kernel(names::kGemmBf16, us(80));
      s.kernel(names::kGelu, us(20));
    }
    if (head) s.kernel(names::kSoftmax, us(50));
    s.sync();
  }
}

// A forward-only model of identical layers repeats every layer too (every 2
// kernels here), in "steps" of 0.1 ms; the batch's copy marks the real step
// of 61 launches, 3 ms.
TEST(Steps, LaunchSequenceOfIdenticalLayersTakesTheStepNotTheLayer) {
  const std::string path = temp_db("identical_layers");
  {
    Sim s(path, Sim::Config{});
    layer_steps(s, 10, 30, us(300), false);
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_EQ(a.summary.step_source, StepSource::kLaunchSequence);
  EXPECT_NE(a.summary.step_source_detail.find("repeating every 61 launches"), std::string::npos)
      << a.summary.step_source_detail;
}

// Steps of a training loop, then a long stretch of other work that starts
// with the same kernel at every other launch (evaluation, say): the steps are
// found, and the walk gives up on the stretch instead of matching the step's
// sequence at each of its launches.
TEST(Steps, LaunchSequenceStepsBeforeALongStretchOfOtherWork) {
  const std::string path = temp_db("steps_then_other_work");
  {
    Sim s(path, Sim::Config{});
    layer_steps(s, 200, 20, ms(1), true);
    for (int i = 0; i < 1000; ++i) {
      s.kernel(names::kGemmBf16, us(5));
      s.kernel(i % 3 ? names::kAdd : names::kMul, us(5));
    }
    s.finish();
  }
  auto a = analyze_path(path);
  EXPECT_EQ(a.summary.step_source, StepSource::kLaunchSequence) << a.summary.step_source_detail;
  EXPECT_NE(a.summary.step_source_detail.find("repeating every 42 launches"), std::string::npos)
      << a.summary.step_source_detail;
  EXPECT_GE(a.summary.steps_recorded, 195);
  EXPECT_LE(a.summary.steps_recorded, 200);
}

TEST(Devices, BusiestByDefaultOtherOnRequest) {
  auto a = analyze_scenario("two_devices");
  EXPECT_EQ(a.summary.device, 0);
  ASSERT_EQ(a.summary.devices.size(), 2u);
  EXPECT_GT(a.summary.devices[1].utilization, 0.0);
  Options o;
  o.device = 1;
  auto b = analyze_scenario("two_devices", true, o);
  EXPECT_EQ(b.summary.device, 1);
  EXPECT_EQ(b.summary.kernels, 4);  // one kernel per analysed step on device 1
  Options bad;
  bad.device = 5;
  try {
    analyze_scenario("two_devices", true, bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device 5 has no GPU activity"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("devices with activity: 0, 1"), std::string::npos) << e.what();
  }
}

TEST(Processes, UnknownPidIsAnError) {
  Options o;
  o.pid = 1;
  EXPECT_THROW(analyze_scenario("healthy", true, o), Error);
}

TEST(NoGpu, ReportSaysWhatIsMissing) {
  auto a = analyze_scenario("no_gpu");
  EXPECT_EQ(a.summary.device, -1);
  EXPECT_TRUE(a.findings.empty());
  bool noted = false;
  for (const auto& n : a.notes)
    noted = noted || n == "no GPU activity recorded: cupti_status=not used: the process did not initialize CUDA";
  EXPECT_TRUE(noted);
  EXPECT_GT(a.breakdown.cpu_exec, 0);
  using Render = std::string (*)(const analyzer::Analysis&);
  for (Render f : {Render(&analyzer::to_text), Render(&analyzer::to_json), Render(&analyzer::to_markdown), Render(&analyzer::to_html)})
    EXPECT_NE(f(a).find("no GPU activity recorded"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::testing

namespace gpuscope::testing {
namespace {

// Rowids with huge gaps (hand-edited or merged files) must not make the loader
// allocate for the gap, and must give the same analysis.
TEST(Loader, RowidGapsGiveTheSameAnalysis) {
  const std::string path = temp_db("rowid_gaps");
  write_scenario("host-sync", true, path);
  const std::string before = analyzer::to_json(analyze_path(path));
  {
    store::Connection c(path, store::Connection::Mode::kReadWrite);
    for (const char* t : {"kernel", "api_call", "op", "external_correlation"})
      c.exec(std::string("UPDATE \"") + t + "\" SET rowid = rowid + 4000000000000 WHERE rowid % 3 = 0");
  }
  EXPECT_EQ(analyzer::to_json(analyze_path(path)), before);
}

}  // namespace
}  // namespace gpuscope::testing
