// Turns the CPU-side records of the per-thread rings into rows, on the writer
// thread: pairs NVTX push/pop and start/end, names domains.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/cpu_records.h"
#include "collector/row_sink.h"

namespace gpuscope::collector {

class CpuDecoder {
 public:
  // State kept per producer thread (per ring).
  struct Thread {
    struct Open {
      uint64_t start;
      std::string name;
      int64_t color, category;
    };
    uint32_t tid = 0;
    std::unordered_map<uint64_t, std::vector<Open>> stacks;  // by NVTX domain
  };

  void handle(const RecordHeader& h, Thread& thread, RowSink& sink);
  // Writes ranges still open (end NULL), at shutdown.
  void flush_open(Thread& thread, RowSink& sink);
  void flush_open_start_end(RowSink& sink);

 private:
  struct OpenStartEnd {
    uint32_t tid;
    uint64_t domain, start;
    std::string name;
    int64_t color, category;
  };
  void write_range(RowSink& sink, uint32_t tid, uint64_t domain, int64_t kind, uint64_t start,
                   int64_t end, int64_t depth, std::string_view name, int64_t color, int64_t category);

  std::unordered_map<uint64_t, OpenStartEnd> start_end_;
  std::unordered_map<uint64_t, std::string> domains_;
};

}  // namespace gpuscope::collector
