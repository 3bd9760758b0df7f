// A large synthetic recording shaped like a training job: one process whose
// main thread runs nested ops that launch kernels and copies on four streams,
// NVTX step ranges, DataLoader waits, counters.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::bench {

struct GeneratedCounts {
  int64_t kernels = 0, memcpys = 0, api_calls = 0, ops = 0, ranges = 0, counters = 0;
  int64_t events() const { return kernels + memcpys + api_calls + ops + ranges; }
  int64_t span_ns = 0;
};

// Writes about `events` timeline events into `path` (replaced if present).
GeneratedCounts generate_recording(const std::string& path, int64_t events, bool progress);

}  // namespace gpuscope::bench
