#pragma once

#include <cstdint>

#include "store/rows.h"

namespace gpuscope::collector {

struct ProcessInfo {
  store::ProcessRow row;  // start/end filled by the writer
  uint64_t start_ns = 0;  // monotonic
};

// pid, parent, host, executable, command line, UTC start, ranks from the environment.
ProcessInfo read_process_info();

}  // namespace gpuscope::collector
