// Finding the training steps: the step table when the torch plugin wrote one,
// else repeating ranges (NVTX or record_function), else the repeating kernel
// launch sequence, else the whole recording.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/model.h"

namespace gpuscope::analyzer {

// The first step and further leading steps longer than this many medians are
// warm-up (allocation, cuDNN autotuning, compilation) and skipped by default.
inline constexpr double kWarmupFactor = 2.0;
// A step longer than this many medians is listed as an outlier.
inline constexpr double kOutlierFactor = 1.5;

struct StepWindow {
  int64_t number = 0, start = 0, end = 0;
  int64_t duration() const { return end - start; }
};

struct StepPlan {
  StepSource source = StepSource::kWholeRecording;
  std::string detail;
  std::vector<StepWindow> all;       // every step found, by start time
  std::vector<StepWindow> analysed;  // after --steps or warm-up skipping
  // Every step as the CPU ran it, before extend_steps_to_gpu made each last
  // until its GPU work ended (empty when that changed nothing): the what-if
  // replay assigns each CUDA call to the step whose code made it.
  std::vector<StepWindow> cpu_all;
  int64_t warmup_skipped = 0;
  int64_t untraced = 0;  // sampled recordings: steps not wholly inside a traced stretch, never analysed
  // Sampled recordings: median step as the job's CPU saw it (step bounds, not
  // extended to the GPU), traced against untraced, to tell what tracing cost
  // this job; 0 when either side has fewer than kMinStepsForCost steps.
  double traced_ms_median = 0, untraced_ms_median = 0;
  // Untraced stretches measured on the GPU (collector: drained at the pause and
  // at the resume): their total length over the steps that ended inside them,
  // the job's step period without tracing; 0 when none was measured.
  double untraced_drained_ms = 0;
  int64_t untraced_drained_steps = 0;
  // The traced steps before the first untraced one were left out (warm-up of a
  // control stretch recording), and the first one after it (CUPTI resuming).
  bool after_control = false;
  // Of warmup_skipped: the first steps of traced stretches after the first
  // (`--sample`: CUPTI resuming), each in a stretch of kMinStretchForResume or more.
  int64_t resume_skipped = 0;
};

inline constexpr size_t kMinStretchForResume = 3;

inline constexpr size_t kMinStepsForCost = 3;
// Steps from the kernel launch sequence (steps.cpp, find_launch_period): a
// period of at least kMinLaunchPeriod kernels, repeated at least
// kMinLaunchSteps times; the sequence matches itself one period later at
// kLaunchRegularity of its places, and kLaunchCoverage of the launches are of
// kernels that run at least kLaunchRegularity times a period on average.
inline constexpr size_t kMinLaunchPeriod = 2;
inline constexpr size_t kMinLaunchSteps = 4;
inline constexpr double kLaunchRegularity = 0.8;
inline constexpr double kLaunchCoverage = 0.9;
// Of the periods that pass, the smallest whose steps last this long (median),
// else the smallest.
inline constexpr int64_t kMinLaunchStepNs = 1'000'000;

// Steps from the step table or repeating ranges, selected as below; none (an
// empty plan) when the recording has neither.
StepPlan plan_steps(const Model& m, const Options& options);
// Sorts plan.all and chooses plan.analysed: --steps, the traced steps of a
// sampled recording, warm-up. Throws Error when --steps selects nothing.
void select_steps(StepPlan& plan, const Model& m, const Options& options);
// Neither a step table nor repeating ranges (a job recorded without the torch
// plugin): steps from the repeating kernel launch sequence, in plan.all (not
// yet selected). Needs the kernels and API calls loaded; false when the
// sequence does not repeat.
bool from_launch_sequence(const Model& m, StepPlan& plan);
// Steps found on the CPU (step table, ranges) end when the CPU moves on, but
// the GPU work they launched can finish much later (the CPU runs ahead of a
// GPU-bound job until the launch queue fills). Each step is extended to the end
// of the kernels and copies launched inside it, and starts no earlier than the
// previous step's extended end, so the steps tile the timeline and a step's
// duration is the step period the job really achieves. Needs the events loaded
// (kernel, copy, API rows) up to the last launch's completion.
void extend_steps_to_gpu(StepPlan& plan, const Model& m);
// For a recording without steps: one step spanning every loaded event.
void plan_whole_recording(StepPlan& plan, const Model& m);

double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);  // p in [0, 100], nearest rank

}  // namespace gpuscope::analyzer
