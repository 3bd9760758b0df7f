// analyze, export, info, check and diff on a recording that is still being
// written (store/live.h): one line on stderr saying so, or with --wait the
// wait until the job has ended and the file is finished.
#pragma once

#include <string>

namespace gpuscope::cli {

// True when `path` is still being written and read as it stands (no --wait).
bool handle_live_recording(const std::string& path, bool wait);

inline constexpr const char* kWaitHelp =
    "If the recording is still being written (gpuscope record or the collector), wait until the job ends";

}  // namespace gpuscope::cli
