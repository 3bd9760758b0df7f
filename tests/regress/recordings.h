// Small synthetic training recordings for the diff tests, written with
// test_support::RecordingBuilder: per step some CPU work, ops that each launch one kernel, an
// optional host-to-device copy, allocator memory, a stream sync closing the
// step and a step row (optimizer steps). Every duration carries seeded noise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::testing {

struct KernelSpec {
  std::string name;
  std::string op;   // the torch op launching it ("" = none)
  double us = 100;  // mean duration
  int launches = 1; // per step
};

struct RunSpec {
  int steps = 31;         // recorded; the analyzer skips the first as warm-up
  double cpu_ms = 1.0;    // Python time per step before the launches
  double noise_cv = 0.02; // on every duration
  uint64_t seed = 1;
  std::vector<KernelSpec> kernels;
  int64_t h2d_bytes = 0;      // one pinned copy per step
  int64_t peak_reserved = 0;  // torch allocator peak; 0 = no memory events
  std::string device = "NVIDIA H200";
  bool write_steps = true;
};

// The kernels of the golden pair: a GEMM, two elementwise kernels (one with
// characters every report must escape) and an optimizer kernel.
RunSpec base_spec();
// base_spec() with the GEMM 40 % slower, the "mul" kernel replaced by a fused
// one, twice the copy volume and a larger memory peak.
RunSpec regressed_spec();

void write_run(const std::string& path, const RunSpec& spec);

// A fresh path in the test temp folder (removed first if present).
std::string temp_path(const std::string& name);

}  // namespace gpuscope::testing
