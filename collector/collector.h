// The collector's one init, reached from every entry point: the LD_PRELOAD
// constructor (which only prepares), NVTX's and CUDA's injection calls, and
// the plugin host. Nothing here throws or kills the traced job.
#pragma once

#include <string>

#include "collector/config.h"

namespace gpuscope::collector {

// Starts recording in this process (writer thread, signal and exit hooks).
// Idempotent and cheap after the first call; a no-op in forked children.
void ensure_started();
bool nvtx_wanted();
const Config& config();
// Why CUPTI is (not) recording, stored in process.cupti_status.
void set_cupti_status(const std::string& status);
std::string cupti_status();

}  // namespace gpuscope::collector
