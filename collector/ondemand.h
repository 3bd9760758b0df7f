// Captures on demand (`gpuscope record --on-demand`, docs/on-demand.md): the
// collector is loaded and dormant (no writer, no CUPTI subscription, the torch
// plugin's op callback off; step boundaries counted) until a capture is asked
// for, through the control channel (common/control_channel.h: `gpuscope
// trigger`, `gpuscope ps`), a rule armed through it (`--when slow-step=2x`,
// `--every`), or the C API of collector/ondemand_api.h. A capture opens its
// file, starts a writer, runs the control stretch and the traced steps
// (schedule.h's phases), then tears CUPTI down, closes the file and goes back
// to dormant. One capture at a time; each into its own file.
#pragma once

#include <string>

#include "collector/config.h"

namespace gpuscope::collector::ondemand {

// Starts the control thread (its socket). From ensure_started, on demand only;
// `first_tick` goes to each capture's writer.
void start(const Config& config, void (*first_tick)());
// The control thread runs in this process (not a forked child): the torch
// plugin's steps are counted although nothing is recorded.
bool counting();
// CUDA called InitializeInjection: CUPTI may be subscribed for a capture.
void note_cuda_initialized();
bool cuda_initialized();
// In a forked child: no socket, no counting.
void forget_in_child();
// At the job's exit: a capture under way ends (its writer is stopped by the caller).
void end_at_exit();
// Meta rows the plugin set while dormant, written again into every capture.
void remember_meta(const std::string& key, const std::string& value);

// What the C API and the control thread share. 0 on success, else -1 with `why`.
struct Request {
  std::string path;
  bool create = true;         // the file is ours to create (O_EXCL); else `gpuscope trigger` made it
  bool finalize_here = true;  // finalize the file in this process (no `gpuscope trigger` waits for it)
  long long steps = 0, control = -1, start_step = 0;
  double seconds = 0;
  std::string trigger;  // meta capture_trigger
};
int begin_capture(const Request& request, std::string& why);
// Ends the capture now and waits (up to timeout_ms) until its file is closed.
int end_capture(int timeout_ms, std::string& why);
// -1 not on demand, else schedule::Phase as a number (0 dormant ... 4 finishing).
int state();

}  // namespace gpuscope::collector::ondemand
