// Writer-thread state shared by the CUPTI decoder and the CPU record handler:
// the database, clock origin, recording window, name caches and statistics.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "store/writer.h"

namespace gpuscope::collector {

struct RowSink {
  explicit RowSink(store::Writer& w) : writer(w) {}

  store::Writer& writer;
  int64_t pid = 0;
  uint64_t origin_ns = 0;
  uint64_t window_start_ns = 0;  // 0 = from the beginning
  uint64_t window_end_ns = 0;    // 0 = to the end

  // Records seen, by statistic key (records_kernel, dropped_cupti, ...); keys are literals.
  std::unordered_map<std::string_view, int64_t> stats;
  // Demangled kernel names by CUPTI's name pointer (CUPTI keeps them alive).
  std::unordered_map<const char*, std::string> kernel_names;
  // API names by (domain << 32 | cbid).
  std::unordered_map<uint64_t, std::string> api_names;
  // Bytes in use per device from CUDA allocations, for the gpu_memory_used counter.
  std::map<int64_t, int64_t> device_memory;
  // Threads seen making CUDA calls, named by the writer.
  std::unordered_map<uint32_t, bool> api_tids;

  bool in_window(uint64_t ts) const {
    return ts >= window_start_ns && (window_end_ns == 0 || ts <= window_end_ns);
  }
  int64_t rel(uint64_t ts) const { return static_cast<int64_t>(ts - origin_ns); }
  void count(std::string_view key, int64_t n = 1) { stats[key] += n; }
};

}  // namespace gpuscope::collector
