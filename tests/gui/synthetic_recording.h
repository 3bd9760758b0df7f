// A small recording with known contents for the viewer's tests: one GPU with
// two streams, one process whose main thread runs NVTX step ranges, nested ops
// and the launches of their kernels and copies, DataLoader waits, steps,
// counters and allocator totals.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope::gui::test {

struct Synthetic {
  static constexpr int64_t kPid = 100;
  static constexpr int64_t kStream = 7;        // gemm kernels and HtoD copies
  static constexpr int64_t kSideStream = 13;   // relu kernels
  static constexpr int kSteps = 4;
  static constexpr int kIterations = 50;       // per step
  static constexpr int64_t kStepNs = 400'000'000;
  static constexpr int64_t kFirstStep = 100'000'000;
  static constexpr int64_t kIterNs = 7'000'000;
  static constexpr int64_t kGemmNs = 50'000;   // + 100 ns * iteration
  static constexpr int64_t kCopyBytes = 1 << 20;

  // Start of iteration i of step s (ns since origin).
  static int64_t iter_start(int s, int i) { return kFirstStep + s * kStepNs + 25'000'000 + i * kIterNs; }
  static int64_t gemm_ns(int i) { return kGemmNs + 100 * i; }
};

// Writes the recording to `path` (which must not exist).
void write_synthetic(const std::string& path);

// A recording with a newer schema version than this build reads.
void write_newer_schema(const std::string& path);
// Bytes that are not SQLite.
void write_garbage(const std::string& path);

}  // namespace gpuscope::gui::test
