#pragma once

#include <string>

#include "cli/support/programs.h"

namespace gpuscope::cli {

// Throws Error for a name outside cuda,nvtx,memory,torch,nvml.
void validate_trace_list(const std::string& list);
// Claims `path` for one recording before the job starts: a fresh empty file,
// created under a temporary name, locked (flock) and linked to `path`, which
// fails atomically when the name exists. With `force` an existing file is
// replaced unless another run holds its lock. Returns the locked descriptor,
// to be kept open until the recording is finalized. Throws Error naming the file.
int claim_output(const std::string& path, bool force);
// GPUSCOPE_COLLECTOR, else libgpuscope_collector.so next to or under the binary.
std::string find_collector();
// Finalizes the recording after the job (store::finalize_recording) and prints
// what it holds on stderr; a failure is a warning, the recording stays as written.
void finalize_and_report(const std::string& path);

}  // namespace gpuscope::cli
