// What every part of the analysis shares once the model is loaded: the
// analysed steps, the events inside them on the analysed device, GPU busy
// time, the per-step breakdown and every GPU idle gap with its cause.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/result.h"
#include "analyzer/intervals.h"
#include "analyzer/model.h"
#include "analyzer/names.h"
#include "analyzer/steps.h"

namespace gpuscope::analyzer {

namespace whatif {
struct LocalCalibrations;
}

// A blocking wait that ends up to this long before the GPU runs dry still
// counts as the reason (CPU and GPU timestamps are not perfectly aligned).
inline constexpr int64_t kSyncToleranceNs = 10'000;
// Device-to-host copies up to this size are scalar reads (.item(), .tolist() of a few
// values). They are not counted as GPU busy: their GPU time is negligible, and
// counting them would cut the idle gap that the synchronization around them causes
// into pieces that no longer show that cause.
inline constexpr int64_t kScalarReadBytes = 4096;
// A gap is launch overhead when the CPU issued launches in it at no more than
// this much CPU time per launch (eager PyTorch spends ~5-30 us per op).
inline constexpr int64_t kLaunchGapPerLaunchNs = 50'000;
// A gap up to this long that holds a launch is the CPU getting to that launch
// (Python and torch dispatch between ops), also when it is outside any op:
// CPU work worth moving elsewhere (a Dataset, preprocessing) comes in longer
// pieces, and CUDA graphs remove the short ones.
inline constexpr int64_t kDispatchGapNs = 1'000'000;
// A wait that starts inside a gap names the gap's cause only when the gap is at
// most the wait plus this much CPU time around it: one .item() after another.
// A long gap that merely holds a short cudaFree or sync (model set-up, a slow
// Dataset) has another cause.
inline constexpr int64_t kWaitGapSlackNs = 1'000'000;

struct Gap {
  int64_t start = 0, end = 0;
  uint32_t step = 0;
  IdleCause cause = IdleCause::kOther;
  uint32_t blocker = kNone;  // apis index of the blocking call (host sync, allocator), else kNone
  uint32_t launches = 0;     // launch API calls made during the gap
  int64_t length() const { return end - start; }
};

struct Context {
  Context(const Model& model, const StepPlan& steps_plan) : m(model), plan(steps_plan) {}
  const Model& m;
  const StepPlan& plan;
  int64_t device = -1;
  // Calibration tables from outside the build (Options::calibrations); null: the embedded ones.
  const whatif::LocalCalibrations* calibrations = nullptr;
  std::vector<StepWindow> steps;  // analysed, by start time
  IntervalSet step_set;
  int64_t step_ns = 0;  // sum of analysed step durations
  double n_steps = 1;

  // Indices into the model, in time order: events starting inside an analysed step.
  std::vector<uint32_t> kernels;  // on the analysed device
  std::vector<uint32_t> copies;   // memcpy and memset on the analysed device
  std::vector<uint32_t> apis;
  std::vector<uint32_t> ops;
  std::vector<std::pair<uint32_t, std::vector<uint32_t>>> kernels_by_stream;  // (stream, kernels in order)

  std::vector<KernelClass> kclass;  // by kernel name id

  IntervalSet gpu_busy;     // analysed device, everything on it
  IntervalSet dataloader;   // DataLoader waits on any thread of the process
  IntervalSet op_busy;      // some torch op running on any thread
  IntervalSet compiling;    // torch.compile compilation ranges and ops, and the unseen compiles below
  // Compiling seen only by the GPU code it loaded: in a job that uses
  // torch.compile, a GPU idle gap of at least 5 ms holding a cuModuleLoad* or
  // cuLibraryLoad* call, in a step whose ops were not recorded (record's
  // default records them in 2 steps of every 50). Included in `compiling`.
  int64_t unseen_compile_ns = 0;
  int64_t unseen_compile_steps = 0;
  // Per analysed step, its torch ops: 0 none, 1 only ops placed by position
  // (GPUSCOPE_TORCH_OP_STEPS: external_id >= 2^62), 2 ops recorded in it.
  std::vector<int8_t> step_ops;
  std::vector<Breakdown> step_breakdown;
  Breakdown breakdown;
  // Every idle gap except launch-overhead ones, which can number millions and
  // are kept as totals only.
  std::vector<Gap> gaps;
  std::array<int64_t, kIdleCauses> idle_by_cause{};
  std::array<int64_t, kIdleCauses> gaps_by_cause{};
  std::array<std::vector<Gap>, kIdleCauses> largest;  // longest gaps per cause, longest first
  std::vector<std::array<int64_t, kIdleCauses>> step_idle;  // idle per cause per analysed step
  int64_t launch_gap_launches = 0;  // launch calls inside launch-overhead gaps

  const KernelClass& kc(uint32_t name) const {
    static const KernelClass none{};
    return name < kclass.size() ? kclass[name] : none;
  }
  std::string name(uint32_t id) const { return std::string(m.str(id)); }
  double ms_per_step(int64_t ns) const { return static_cast<double>(ns) / 1e6 / n_steps; }
  double pct_of_step(int64_t ns) const { return step_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(step_ns) : 0; }
  double mean_step_ms() const { return static_cast<double>(step_ns) / 1e6 / n_steps; }
  uint32_t op_of_corr(uint32_t corr) const { return m.op_by_corr.find(corr); }
  // The op a user wrote: the outermost op enclosing `op` ("aten::item" rather than
  // "aten::_local_scalar_dense"), stopping below autograd/engine wrappers.
  uint32_t user_op(uint32_t op) const;
  std::string op_name(uint32_t op) const { return op == kNone ? std::string() : name(m.ops[op].name); }
  int step_of(int64_t t) const;  // index into steps, -1 outside
};

// `alongside` (may be empty) runs in parallel with the first phase, which does
// not read the model's links; the idle attribution after it does.
Context build_context(const Model& m, const StepPlan& plan, int64_t device, const std::function<void()>& alongside);

}  // namespace gpuscope::analyzer
