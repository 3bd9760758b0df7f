#include "step_tracker.h"

#include "gpuscope/plugin.h"

namespace gpuscope::torch_plugin {

uint64_t StepTracker::first_step_start(uint64_t fallback) const {
  if (early_start_) return early_start_;
  uint64_t first = first_activity_.load(std::memory_order_relaxed);
  return first ? first : fallback;
}

void StepTracker::emit(uint64_t start, uint64_t end, int64_t number, uint32_t source) {
  if (start > end) start = end;
  any_step_ = true;
  last_end_ = end;
  emit_(start, end, number, source);
}

void StepTracker::on_range_end(const RangeInfo& info, uint64_t start, uint64_t end, bool nested) {
  if (info.kind == RangeKind::kUser) return;
  std::lock_guard lock(mutex_);
  if (!any_step_ && !early_start_ &&
      (info.kind == RangeKind::kDataLoader || info.kind == RangeKind::kOptimizerOther))
    early_start_ = start;
  switch (info.kind) {
    case RangeKind::kProfilerStep:
      profiler_steps_ = true;
      fallback_possible_.store(false, std::memory_order_relaxed);
      emit(start, end, info.step_number, GPUSCOPE_STEP_PROFILER_STEP);
      break;
    case RangeKind::kOptimizerOther:
      fallback_possible_.store(false, std::memory_order_relaxed);
      break;
    case RangeKind::kOptimizerStep: {
      fallback_possible_.store(false, std::memory_order_relaxed);
      if (nested || profiler_steps_) break;
      if (optimizer_class_.empty()) optimizer_class_ = std::string(info.optimizer_class);
      // A second optimizer class (a GAN's discriminator, say) steps inside the
      // same iteration; counting it too would halve every step.
      if (info.optimizer_class != optimizer_class_) break;
      uint64_t step_start = any_step_ ? last_end_ : first_step_start(start);
      emit(step_start, end, optimizer_steps_++, GPUSCOPE_STEP_OPTIMIZER);
      break;
    }
    case RangeKind::kDataLoader:
    case RangeKind::kUser:
      break;
  }
}

void StepTracker::start_backward_pass(int64_t seq_nr, uint64_t ts) {
  std::lock_guard lock(mutex_);
  if (!fallback_possible_.load(std::memory_order_relaxed) || seq_nr <= pass_max_seq_.load()) return;
  // The engine runs the root of a graph first and it carries the highest
  // sequence number; every later forward creates higher ones. So a backward
  // node above every number seen so far starts a new pass.
  if (pass_open_) {
    uint64_t end = last_backward_end_.load(std::memory_order_relaxed);
    uint64_t step_start = any_step_ ? last_end_ : first_step_start(end);
    emit(step_start, end, backward_steps_++, GPUSCOPE_STEP_OPTIMIZER);
  }
  pass_open_ = true;
  pass_max_seq_.store(seq_nr, std::memory_order_relaxed);
  note_activity(ts);
}

void StepTracker::finish() {
  std::lock_guard lock(mutex_);
  if (!fallback_possible_.load(std::memory_order_relaxed) || !pass_open_) return;
  pass_open_ = false;
  uint64_t end = last_backward_end_.load(std::memory_order_relaxed);
  uint64_t step_start = any_step_ ? last_end_ : first_step_start(end);
  emit(step_start, end, backward_steps_++, GPUSCOPE_STEP_OPTIMIZER);
}

}  // namespace gpuscope::torch_plugin
