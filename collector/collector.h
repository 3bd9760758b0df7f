// The collector's one init, reached from every entry point: the LD_PRELOAD
// constructor (which only prepares), NVTX's and CUDA's injection calls, and
// the plugin host. Nothing here throws or kills the traced job.
#pragma once

#include <string>

#include "collector/config.h"
#include "collector/process_info.h"  // set_cupti_status, for the entry points

namespace gpuscope::collector {

// Starts recording in this process (writer thread, signal and exit hooks).
// Idempotent and cheap after the first call; a no-op in forked children.
void ensure_started();
bool nvtx_wanted();
const Config& config();

}  // namespace gpuscope::collector
