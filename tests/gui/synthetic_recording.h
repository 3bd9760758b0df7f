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

// A data-parallel job of four ranks over gloo on the CPU, as the torch plugin
// records one (each step: DataLoader wait, compute op, `c10d::allreduce_`
// enqueue, the `gloo:all_reduce` range on the ProcessGroup's worker thread
// until every rank arrived, optimizer step), with what the viewer must sort
// out: pids not in rank order, a launcher process without a rank, each rank's
// recorded times skewed by a constant (two hosts' clocks), step starts
// jittered, rank 1 starting its first step late, and rank kStraggler loading
// its data kExtraDataNs longer per step (the others wait for it).
struct SyntheticRanks {
  static constexpr int kRanks = 4;
  static constexpr int64_t kPid[kRanks] = {304, 301, 303, 302};  // pid of rank r
  static constexpr int64_t kLauncherPid = 300;
  static constexpr int kSteps = 10;
  static constexpr int kStraggler = 2;
  static constexpr int64_t kSkewNs[kRanks] = {0, 3'000'000, -2'000'000, 5'000'000};
  static constexpr int64_t kLateFirstStepNs = 4'000'000;  // rank 1, step 0 only
  static constexpr int64_t kMaxJitterNs = 400'000;
  static constexpr int64_t kFirstStep = 50'000'000;  // job time of step 0
  static constexpr int64_t kDataNs = 300'000, kExtraDataNs = 20'000'000, kComputeNs = 15'000'000,
                           kEnqueueNs = 50'000, kTransferNs = 500'000, kOptimizerNs = 400'000;
  // Every rank's step takes as long: the last arrival's work plus the transfer.
  static constexpr int64_t kStepNs = kMaxJitterNs + kDataNs + kExtraDataNs + kComputeNs + kEnqueueNs + kTransferNs +
                                     kOptimizerNs + 10'000;

  // 0 to 400 us later, by rank and step.
  static int64_t jitter(int r, int k) { return ((r * 7 + k * 3) % 5) * 100'000; }
  // Recorded start and end of rank r's step k.
  static int64_t step_start(int r, int k) {
    return kFirstStep + k * kStepNs + kSkewNs[r] + jitter(r, k) + (r == 1 && k == 0 ? kLateFirstStepNs : 0);
  }
  static int64_t step_end(int r, int k) { return kFirstStep + (k + 1) * kStepNs - 10'000 + kSkewNs[r]; }
};

void write_synthetic_ranks(const std::string& path);

// A recording with a newer schema version than this build reads.
void write_newer_schema(const std::string& path);
// Bytes that are not SQLite.
void write_garbage(const std::string& path);

}  // namespace gpuscope::gui::test
