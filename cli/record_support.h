#pragma once

#include <string>

namespace gpuscope::cli {

// Throws Error for a name outside cuda,nvtx,memory,torch,nvml.
void validate_trace_list(const std::string& list);
// PATH lookup as execvp does it; empty when not found.
std::string find_executable(const std::string& name);
// GPUSCOPE_COLLECTOR, else libgpuscope_collector.so next to or under the binary.
std::string find_collector();
// Derives graph launches, folds the WAL into the file and prints a summary on stderr.
void finalize_recording(const std::string& path);

}  // namespace gpuscope::cli
