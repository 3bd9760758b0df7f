// The CUDA devices as the driver describes them, asked directly (libcuda's
// exports, found with dlopen RTLD_NOLOAD): a capture on demand subscribes
// CUPTI after the job created its contexts, when CUPTI no longer reports
// them, so each capture's file gets its `device` rows from here instead
// (CUPTI's own, if any come, replace them: same keys).
#pragma once

#include <vector>

#include "trace_formats/store/rows.h"

namespace gpuscope::collector {

// Empty when libcuda is not loaded or not initialized (cuInit not called).
std::vector<store::DeviceRow> query_devices();

}  // namespace gpuscope::collector
