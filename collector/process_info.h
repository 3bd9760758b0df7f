#pragma once

#include <cstdint>
#include <string>

#include "trace_formats/store/rows.h"

namespace gpuscope::collector {

struct ProcessInfo {
  store::ProcessRow row;  // start/end filled by the writer
  uint64_t start_ns = 0;  // monotonic
  // What all processes of one distributed job share and another job's do not
  // (the launcher's rendezvous), stored as meta `job_key` so that `gpuscope
  // merge` refuses files of different jobs; empty outside such a job.
  std::string job_key;
};

// pid, parent, host, executable, command line, UTC start, ranks and job key from the environment.
ProcessInfo read_process_info();

// Why CUPTI is (not) recording, stored in process.cupti_status: set by the
// collector's init, read by the writer when it writes the process row.
void set_cupti_status(const std::string& status);
std::string cupti_status();

}  // namespace gpuscope::collector
