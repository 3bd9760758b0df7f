// Streams a Chrome trace (torch.profiler/Kineto JSON, or a bare event array)
// from a ByteSource: the `traceEvents` array is parsed element by element from
// a bounded window, so memory stays flat whatever the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "trace_formats/import/byte_source.h"
#include "trace_formats/import/trace_event.h"

namespace gpuscope::formats {

struct DeviceProps {
  int64_t id = kAbsent;
  std::string name, uuid;
  int64_t total_memory = 0, compute_major = 0, compute_minor = 0, sm_count = 0;
  int64_t memory_bandwidth = 0, core_clock_khz = 0;
};

struct DistributedInfo {
  int64_t rank = kAbsent, world_size = kAbsent;
  std::string backend;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void on_event(const TraceEvent& ev) = 0;
  virtual void on_device(const DeviceProps& dev) = 0;
  virtual void on_distributed(const DistributedInfo& info) = 0;
  virtual void on_base_time(int64_t ns) = 0;
  // Other scalar top-level members kept as text (schemaVersion, displayTimeUnit, ...).
  virtual void on_top_level(std::string_view key, std::string_view value) = 0;
};

struct ReadProgress {
  uint64_t raw_bytes = 0, raw_total = 0, events = 0;
};

struct ReadResult {
  uint64_t bytes = 0;     // decompressed JSON bytes
  uint64_t elements = 0;  // elements of the event array
  bool top_level_array = false;
};

// Throws Error("<name>: ...") for input that is not JSON, JSON of another
// shape, or truncated. `progress` (optional) is called about every 64k events.
// `window` is the initial buffer size (tests use tiny ones to exercise refills).
ReadResult read_chrome_trace(ByteSource& src, TraceSink& sink,
                             const std::function<void(const ReadProgress&)>& progress = {},
                             size_t window = size_t{4} << 20);

}  // namespace gpuscope::formats
