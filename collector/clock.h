#pragma once

#include <time.h>

#include <cstdint>

namespace gpuscope::collector {

// The recording's one clock: CLOCK_MONOTONIC in ns. CUPTI is told to use it too.
inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

}  // namespace gpuscope::collector
