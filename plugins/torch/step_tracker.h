// Decides where training steps begin and end, from the markers torch leaves
// (rules in plugins/torch/README.md):
//   1. ProfilerStep#N ranges, when torch.profiler runs with a schedule;
//   2. otherwise each top-level Optimizer.step of the first optimizer class
//      seen closes a step that began where the previous one ended;
//   3. with neither (C++ loops, hand-written optimizers), each autograd
//      backward pass closes a step.
// Torch-free so the rules are unit-tested; the callbacks feed it. Markers are
// a few per step, so a mutex is fine there; the per-op entry points are a
// relaxed load or two unless something changes.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "range_names.h"

namespace gpuscope::torch_plugin {

using EmitStepFn = void (*)(uint64_t start, uint64_t end, int64_t number, uint32_t source);

class StepTracker {
 public:
  explicit StepTracker(EmitStepFn emit) : emit_(emit) {}

  // Start of a top-level op or of any range: the first one starts step 0 when
  // no earlier marker does.
  void note_activity(uint64_t ts) {
    if (first_activity_.load(std::memory_order_relaxed) != 0) return;
    uint64_t expected = 0;
    first_activity_.compare_exchange_strong(expected, ts, std::memory_order_relaxed);
  }

  // A finished DataLoader, optimizer or profiler-step range. `nested` is true
  // for an Optimizer.step called inside another one (wrappers such as
  // Lookahead): only the outer call counts.
  void on_range_end(const RangeInfo& info, uint64_t start, uint64_t end, bool nested);

  // Backward-function ops, for rule 3. seq_nr < 0 (AccumulateGrad) is ignored.
  void on_backward_op_start(int64_t seq_nr, uint64_t ts) {
    if (seq_nr < 0 || !fallback_possible_.load(std::memory_order_relaxed)) return;
    if (seq_nr <= pass_max_seq_.load(std::memory_order_relaxed)) return;
    start_backward_pass(seq_nr, ts);
  }
  void on_backward_op_end(uint64_t ts) {
    if (!fallback_possible_.load(std::memory_order_relaxed)) return;
    uint64_t seen = last_backward_end_.load(std::memory_order_relaxed);
    while (ts > seen && !last_backward_end_.compare_exchange_weak(seen, ts, std::memory_order_relaxed)) {
    }
  }

  // True until an optimizer or profiler marker is seen: steps may have to come
  // from backward passes (rule 3), which needs the backward ops.
  bool steps_from_backward_passes() const { return fallback_possible_.load(std::memory_order_relaxed); }

  // At exit: closes the step of the last backward pass (rule 3).
  void finish();

 private:
  void start_backward_pass(int64_t seq_nr, uint64_t ts);
  uint64_t first_step_start(uint64_t fallback) const;
  void emit(uint64_t start, uint64_t end, int64_t number, uint32_t source);

  EmitStepFn emit_;
  std::atomic<uint64_t> first_activity_{0};
  std::atomic<bool> fallback_possible_{true};
  std::atomic<int64_t> pass_max_seq_{-1};
  std::atomic<uint64_t> last_backward_end_{0};

  std::mutex mutex_;
  bool profiler_steps_ = false;
  bool any_step_ = false;
  uint64_t early_start_ = 0;  // first DataLoader/optimizer range before any step
  uint64_t last_end_ = 0;     // end of the last step emitted
  std::string optimizer_class_;
  int64_t optimizer_steps_ = 0;
  int64_t backward_steps_ = 0;
  bool pass_open_ = false;
};

}  // namespace gpuscope::torch_plugin
