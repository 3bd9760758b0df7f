// The RecordFunction global callbacks: every op, autograd function and
// annotation range of the process passes through them (ops through one,
// USER_SCOPE ranges through the other; with sampled tracing the ops' callback
// is disabled between traced stretches, at step boundaries). Per-thread stacks pair
// starts with ends; an op is emitted when it ends, with the shapes and dtypes
// captured at its start.
#pragma once

#include <cstdint>
#include <string>

#include "step_tracker.h"

namespace gpuscope::torch_plugin {

struct CallbackOptions {
  bool shapes = true;        // box op inputs to record shapes and dtypes
  bool external_ids = false;       // give ops ids that API calls (and so kernels) link to
  bool push_external_ids = false;  // and push them as CUPTI external correlation around each op
                                   // (off under `gpuscope record`, which links after the job)
  bool ops = true;            // GPUSCOPE_TORCH_OPS=0: ops not recorded (ranges and steps are), to
                              // measure torch's own RecordFunction cost apart from the plugin's
  bool dataloader_ops = false; // GPUSCOPE_TORCH_DATALOADER_OPS=1: ops inside a main-process DataLoader
                               // fetch too; by default torch's RecordFunction is off on the thread for
                               // the fetch (its range stays), so a per-sample Dataset costs nothing
  uint32_t op_steps = 0;       // GPUSCOPE_TORCH_OP_STEPS "N/M": ops in the first N steps of every M
  uint32_t op_period = 0;      // (M 0: of each traced stretch only); N 0: in every step
};

// Adds the global callbacks; false with `why` when torch refused.
bool register_callbacks(const CallbackOptions& options, std::string& why);

StepTracker& step_tracker();

// Sampled tracing: enables or disables the ops' callback (idempotent; from
// any thread). The collector calls it through gpuscope_plugin_set_traced.
void set_ops_traced(bool on);

// Pauses op recording on top of the schedule, from any thread: 0 records
// (the default), 1 pauses with the op callback off, 2 pauses with it on and
// returning at once (torch's cost of calling it, without the plugin's work).
// Exported as gpuscope_plugin_pause_ops; bench/torch_plugin/ab_shim.py uses it
// to compare steps with and without ops inside one process.
void set_ops_paused(int mode);

// The RecordFunction handle of the plugin's op callback (0 before
// registration); the cost benchmark switches it off and on.
uint64_t registered_callback_handle();

}  // namespace gpuscope::torch_plugin
