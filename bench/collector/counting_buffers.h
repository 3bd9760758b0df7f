// What the CUPTI measuring sticks of bench/collector (bare_cupti.cpp,
// launch_cost.cu) share: activity buffers of kBytes handed out and, once
// CUPTI returns them full, counted and freed (no decoding, no writer), and
// CLOCK_MONOTONIC in ns.
#pragma once

#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace gpuscope::bench {

inline std::atomic<unsigned long long> g_records{0};  // activity records CUPTI returned

inline uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

template <size_t kBytes>
void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = *buffer ? kBytes : 0;
  *max_records = 0;
}

inline void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  unsigned long long n = 0;
  while (valid && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++n;
  g_records.fetch_add(n);
  std::free(buffer);
}

}  // namespace gpuscope::bench
