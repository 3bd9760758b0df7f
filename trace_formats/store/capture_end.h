// A capture on demand whose process ended before its traced stretch did
// (SIGKILL, a crash: docs/on-demand.md): the collector never wrote that
// stretch's `sampling_window` range, so nothing would say which steps were
// traced. `gpuscope trigger` closes it from what the file holds.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::store {

// For process `pid` of the recording at `path` with no sampling window: one
// from the start of its first step that holds an op (the control steps before
// it run without ops) to the end of its last step, and meta
// `capture_ended_early`. False when it has a window already, or no step with ops.
bool close_cut_capture(const std::string& path, int64_t pid);

}  // namespace gpuscope::store
