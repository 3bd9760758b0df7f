// NVML samples (SM utilization, memory used, power, SM clock) at 10 Hz, taken
// by `gpuscope record` itself, not inside the job: NVML polled from the job's
// own writer thread hung torch jobs on the H200 (docs/PERFORMANCE.md). The
// samples go into the recording as `counter` rows of the job's pid, written
// once a second; when the job ends their devices are renumbered from NVML
// indices to the CUDA ordinals of the `device` table (matched by UUID).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace gpuscope::cli {

// NVML numbers devices in PCI order; the rest of a recording uses CUDA ordinals.
// Moves the job's nvml_* counters from NVML index i to the ordinal of the
// `device` row whose UUID is uuids[i] (hex, no dashes), drops those of GPUs
// the job did not use, and leaves everything alone when there is no device row.
// Throws gpuscope::Error when the database cannot be updated.
void renumber_nvml_counters(const std::string& db_path, int64_t pid, const std::vector<std::string>& uuids);

class NvmlPoller {
 public:
  struct Window {
    int64_t origin_ns = 0, start_ns = 0, end_ns = 0;  // CLOCK_MONOTONIC; end 0 = open
  };
  // False (and nothing started) when NVML does not load or sees no device.
  bool start(const std::string& db_path, pid_t job_pid, Window window);
  // Writes what is left and renumbers devices. Safe to call when not started.
  void stop();
  ~NvmlPoller() { stop(); }

 private:
  struct Api;
  struct Sample {
    unsigned device;
    const char* name;
    int64_t ts;
    double value;
  };
  void run();
  void take(int64_t now);
  bool write();

  Api* api_ = nullptr;
  std::string path_;
  pid_t pid_ = 0;
  Window window_;
  std::vector<Sample> pending_;
  std::vector<std::string> uuids_;  // per NVML index, hex without dashes
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpuscope::cli
