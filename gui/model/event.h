// The compact event record of the viewer's model and the kinds it knows.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace_formats/common/time_math.h"  // times clamped at load (clamp_time), totals saturate

namespace gpuscope::gui {

enum class EventKind : uint8_t {
  kKernel,
  kMemcpy,
  kMemset,
  kApiCall,
  kSync,
  kOp,
  kRange,       // NVTX push/pop or torch user range
  kDataLoader,  // DataLoader __next__ waits
  kOptimizer,   // optimizer step / zero_grad ranges
  kAsyncRange,  // NVTX start/end ranges (may cross threads)
  kMark,        // NVTX marks (instants)
  kTracerOverhead,  // CUPTI's overhead records (`record --trace ...,overhead`) and gpuscope's own switch stalls
  kCount
};

std::string_view kind_name(EventKind kind);
// The database table an event of this kind was read from.
std::string_view kind_table(EventKind kind);
inline bool is_gpu_kind(EventKind k) { return k <= EventKind::kMemset; }

// 32 bytes; 10 M of them fit in 320 MB.
struct Event {
  int64_t start = 0;
  int64_t end = 0;
  uint32_t name = 0;   // string.id (memcpy/memset: see synthetic names in Timeline)
  uint32_t row = 0;    // row id in kind_table(kind)
  uint32_t extra = 0;  // correlation id (GPU activity, API calls) or ARGB color (ranges, 0 = none)
  EventKind kind = EventKind::kKernel;
  uint8_t aux = 0;     // memcpy copy_kind
  int64_t duration() const { return end - start; }
};
static_assert(sizeof(Event) == 32, "Event is the unit of the model's memory budget");

// One sample of a counter; the value holds until the next sample.
struct CounterSample {
  int64_t ts = 0;
  double value = 0;
};

}  // namespace gpuscope::gui
