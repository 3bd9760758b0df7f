#include "collector/graph_steps.h"

#include "collector/emit.h"
#include "collector/schedule.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::collector {

void GraphSteps::on_plugin_step(int64_t number) {
  std::lock_guard lock(mutex_);
  ++plugin_steps_;
  next_number_ = number + 1;
  anchor_ = 0;
}

std::optional<GraphStep> GraphSteps::on_launch(uint64_t exec, uint64_t ts) {
  std::lock_guard lock(mutex_);
  if (runs_.size() >= kMaxExecs && !runs_.contains(exec)) runs_.clear();
  Run& run = runs_[exec];
  const bool in_a_row = run.launches > 0 && run.plugin_steps == plugin_steps_;
  const uint64_t previous = run.last_ts;
  run.launches = in_a_row ? run.launches + 1 : 1;
  run.last_ts = ts;
  run.plugin_steps = plugin_steps_;
  if (anchor_ == 0 && run.launches >= kRunToAnchor) anchor_ = exec;
  if (anchor_ != exec || previous == 0 || previous > ts) return std::nullopt;
  return GraphStep{previous, ts, next_number_++};
}

namespace graph_steps {
namespace {
GraphSteps g_steps;
}

void on_launch(const Config& config, uint64_t exec, uint64_t ts) {
  const std::optional<GraphStep> step = g_steps.on_launch(exec, ts);
  if (!step) return;
  emit_step(step->start, step->end, step->number, schema::step_source::graph_launch);
  schedule::on_step_boundary(config, step->end);
}

void on_plugin_step(int64_t number) { g_steps.on_plugin_step(number); }

}  // namespace graph_steps
}  // namespace gpuscope::collector
