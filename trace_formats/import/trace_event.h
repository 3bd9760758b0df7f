// One Chrome-trace event as the torch.profiler importer sees it: the fields and
// `args` it maps, as views into the parse window (valid until the next event).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_formats/import/json_cursor.h"

namespace gpuscope::formats {

inline constexpr int64_t kAbsent = INT64_MIN;  // same sentinel as store::kNull

// Times an event may have, in ns: |ts| up to 2^62 (epoch nanoseconds until
// the year 2116) and durations up to 2^55 (about 417 days). Beyond them a
// number is not a time the trace can have meant (1e300, 2^64): the event is
// dropped and counted instead of being stored saturated.
inline constexpr int64_t kMaxAbsTimeNs = int64_t{1} << 62;
inline constexpr int64_t kMaxDurationNs = int64_t{1} << 55;

// pid/tid are numbers in Kineto traces, strings in some ("CPU functions",
// "stream 7", "Spans").
struct TraceId {
  bool present = false;
  bool is_number = false;
  int64_t number = 0;
  std::string_view text;
};

struct TraceEvent {
  std::string_view ph, cat, name;
  TraceId pid, tid;
  int64_t ts = kAbsent, dur = kAbsent;  // ns

  // args
  int64_t external_id = kAbsent, correlation = kAbsent, device = kAbsent, context = kAbsent;
  int64_t stream = kAbsent, registers = kAbsent, shared_memory = kAbsent, bytes = kAbsent;
  int64_t seq_nr = kAbsent, fwd_tid = kAbsent, cbid = kAbsent;
  int64_t device_type = kAbsent, device_id = kAbsent, addr = kAbsent, mem_bytes = kAbsent;
  int64_t total_allocated = kAbsent, total_reserved = kAbsent, sort_index = kAbsent;
  int64_t static_smem = kAbsent, dynamic_smem = kAbsent, graph_id = kAbsent;
  int64_t graph_node_id = kAbsent, color = kAbsent, nvtx_category = kAbsent, value = kAbsent;
  int64_t event_id = kAbsent, return_code = kAbsent, src_device = kAbsent, dst_device = kAbsent;
  int64_t recorded_ts = kAbsent, recorded_dur = kAbsent;  // gpuscope's export: the times before HtaFit
  std::array<int64_t, 3> grid{kAbsent, 1, 1}, block{kAbsent, 1, 1};
  std::string_view input_dims, input_type;  // raw JSON text of the values
  std::string_view arg_name, arg_labels, source, domain, step_source, range_kind;
  bool unclosed = false;
  // Why the event cannot be stored ("ts out of range", "negative dur", ...): a
  // ts, dur, pid or tid that is there but no number in range. Null when fine.
  const char* invalid = nullptr;
  // Numeric args of counter ("C") events, in order.
  std::vector<std::pair<std::string_view, double>> counters;

  void clear() {
    counters.clear();
    auto keep = std::move(counters);
    *this = TraceEvent{};
    counters = std::move(keep);
  }
};

// Parses the object at the cursor into `ev`. Unknown members are skipped
// (validated). Throws json::NeedMore / json::SyntaxError.
void parse_trace_event(json::Cursor& c, json::Scratch& scratch, TraceEvent& ev);

// Lowercases ASCII into `buf` (up to its size) for category comparisons.
std::string_view ascii_lower(std::string_view s, char* buf, size_t cap);

}  // namespace gpuscope::formats
