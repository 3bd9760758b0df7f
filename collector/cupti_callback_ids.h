// The callback ids of one API domain that the CUPTI source treats specially
// (noisy calls, stream captures, graph launches, context creation), looked up
// by name once, so the lists work across CUPTI versions.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/cupti_api.h"

namespace gpuscope::collector::cupti_source {

struct CallbackIds {
  std::vector<uint32_t> noisy, capture_begin, capture_end, graph_launch;
  // cuCtxCreate*, cuDevicePrimaryCtxRetain (driver only): no teardown while one runs.
  std::vector<uint32_t> context_create;

  static bool contains(const std::vector<uint32_t>& ids, uint32_t id);
};

// The lists of `domain` (runtime or driver API), built at the first call from
// the names `api` gives; later calls return them as built.
const CallbackIds& callback_ids(const CuptiApi& api, CUpti_CallbackDomain domain);

}  // namespace gpuscope::collector::cupti_source
