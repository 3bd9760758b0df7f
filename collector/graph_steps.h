// Steps of a job whose whole training step is one CUDA graph replay (torch's
// "whole network capture" recipe: forward, backward and optimizer.step()
// captured once, then `graph.replay()` each step). Such a loop runs no
// Optimizer.step, ProfilerStep or backward op per step, so the torch plugin
// finds no step boundary after the capture: the control stretch would never
// end and nothing of the replays would be traced. The collector sees every
// graph launch (its CUPTI callback stays on for them) and decides here:
//   - a graph executable launched kRunToAnchor times in a row of its own
//     launches with no plugin step among them anchors the steps (fewer would
//     take a graph replayed per micro-batch inside optimizer steps, gradient
//     accumulation, for the step);
//   - from then on each launch of the anchor closes a step that began at its
//     previous launch, numbered on from the plugin's last step, with source
//     `graph_launch`, and is a step boundary for the schedule like a plugin's;
//   - a plugin step drops the anchor (the loop went back to optimizer steps).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "collector/config.h"

namespace gpuscope::collector {

struct GraphStep {
  uint64_t start = 0, end = 0;
  int64_t number = 0;
  bool operator==(const GraphStep&) const = default;
};

// The rule alone, without CUPTI or the writer, so that it is unit-tested.
class GraphSteps {
 public:
  static constexpr int kRunToAnchor = 8;

  // The torch plugin emitted step `number`.
  void on_plugin_step(int64_t number);

  // A launch of graph executable `exec` ended at `ts`: the step it closes, if any.
  std::optional<GraphStep> on_launch(uint64_t exec, uint64_t ts);

 private:
  struct Run {
    uint64_t last_ts = 0;
    uint64_t plugin_steps = 0;  // plugin steps seen at its last launch
    int launches = 0;           // in a row with no plugin step among them
  };
  static constexpr size_t kMaxExecs = 4096;  // forget older graphs past this

  std::mutex mutex_;
  std::unordered_map<uint64_t, Run> runs_;
  uint64_t plugin_steps_ = 0;
  int64_t next_number_ = 0;
  uint64_t anchor_ = 0;  // 0: none
};

namespace graph_steps {

// From the CUPTI callback at the exit of cudaGraphLaunch/cuGraphLaunch.
void on_launch(const Config& config, uint64_t exec, uint64_t ts);

// From the plugin host when the plugin emits a step.
void on_plugin_step(int64_t number);

}  // namespace graph_steps
}  // namespace gpuscope::collector
