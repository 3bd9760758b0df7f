#include "trace_formats/import/trace_event.h"

#include <cstring>
#include <optional>

namespace gpuscope::formats {

namespace {

using json::Cursor;
using json::Kind;
using json::Scratch;

// Fixed-length comparison the compiler inlines (std::string_view's == calls memcmp).
template <size_t N>
inline bool is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

// An integer-valued member; strings, bare words and other shapes leave it absent.
void read_int(Cursor& c, int64_t& out) {
  Kind k = c.peek_kind();
  if (k == Kind::kNumber) {
    if (c.bare_word()) return;
    out = c.number().to_int64();
  } else if (k == Kind::kTrue || k == Kind::kFalse) {
    out = k == Kind::kTrue;
    c.skip_value();
  } else {
    c.skip_value();
  }
}

void read_text(Cursor& c, Scratch& s, std::string_view& out) {
  if (c.peek_kind() == Kind::kString)
    out = c.string(s);
  else
    c.skip_value();
}

void read_id(Cursor& c, Scratch& s, TraceId& id, const char* out_of_range, const char*& invalid) {
  Kind k = c.peek_kind();
  if (k == Kind::kNumber) {
    if (c.bare_word()) return;
    id.present = true;
    id.is_number = true;
    const std::optional<int64_t> v = c.number().to_int64_checked();
    if (!v && !invalid) invalid = out_of_range;
    id.number = v.value_or(0);
  } else if (k == Kind::kString) {
    id.present = true;
    id.text = c.string(s);
  } else {
    c.skip_value();
  }
}

// A time in µs as ns. A member that is there but holds no number, or one
// beyond `limit`, or negative, marks the event invalid.
// Kineto's ts counts from the epoch or from baseTimeNanoseconds, never below
// zero: a negative ts would stretch the recording back to 1970.
struct TimeField {
  int64_t limit;
  const char *not_number, *out_of_range, *negative;
};
constexpr TimeField kTs{kMaxAbsTimeNs, "ts not a number", "ts out of range", "negative ts"};
constexpr TimeField kDur{kMaxDurationNs, "dur not a number", "dur out of range", "negative dur"};

void read_time(Cursor& c, int64_t& out, const TimeField& f, const char*& invalid) {
  const char* bad = nullptr;
  if (c.peek_kind() != Kind::kNumber) {
    c.skip_value();
    bad = f.not_number;
  } else if (c.bare_word()) {  // NaN, Infinity, N/A
    bad = f.not_number;
  } else {
    const int64_t v = c.number().us_to_ns();  // saturates beyond int64
    if (v > f.limit || v < -f.limit) bad = f.out_of_range;
    else if (v < 0) bad = f.negative;
    else out = v;
  }
  if (bad && !invalid) invalid = bad;
}

// [x, y, z] of integers; anything else leaves `out` unchanged.
void read_dim3(Cursor& c, std::array<int64_t, 3>& out) {
  if (c.peek_kind() != Kind::kArray) {
    c.skip_value();
    return;
  }
  c.expect('[');
  if (c.consume(']')) return;
  size_t i = 0;
  std::array<int64_t, 3> v{kAbsent, 1, 1};
  do {
    int64_t x = kAbsent;
    read_int(c, x);
    if (i < 3) v[i] = x;
    ++i;
  } while (c.next_member(']'));
  if (i >= 1 && v[0] != kAbsent) out = v;
}

void read_args(Cursor& c, Scratch& s, TraceEvent& ev) {
  if (c.peek_kind() != Kind::kObject) {
    c.skip_value();
    return;
  }
  c.expect('{');
  if (c.consume('}')) return;
  do {
    std::string_view key = c.string(s);
    c.expect(':');
    bool known = true;
    switch (key.size()) {
      case 4:
        if (is(key, "name")) read_text(c, s, ev.arg_name);
        else if (is(key, "Addr")) read_int(c, ev.addr);
        else if (is(key, "grid")) read_dim3(c, ev.grid);
        else if (is(key, "cbid")) read_int(c, ev.cbid);
        else known = false;
        break;
      case 5:
        if (is(key, "bytes")) read_int(c, ev.bytes);
        else if (is(key, "Bytes")) read_int(c, ev.mem_bytes);
        else if (is(key, "block")) read_dim3(c, ev.block);
        else if (is(key, "event")) read_int(c, ev.event_id);
        else if (is(key, "color")) read_int(c, ev.color);
        else known = false;
        break;
      case 6:
        if (is(key, "device")) read_int(c, ev.device);
        else if (is(key, "stream")) read_int(c, ev.stream);
        else if (is(key, "labels")) read_text(c, s, ev.arg_labels);
        else if (is(key, "source")) read_text(c, s, ev.source);
        else if (is(key, "domain")) read_text(c, s, ev.domain);
        else known = false;
        break;
      case 4 + 4:
        if (is(key, "unclosed")) {
          int64_t v = 0;
          read_int(c, v);
          ev.unclosed = v != 0 && v != kAbsent;
        } else if (is(key, "graph id")) read_int(c, ev.graph_id);
        else if (is(key, "category")) read_int(c, ev.nvtx_category);
        else known = false;
        break;
      case 4 + 3:
        if (is(key, "context")) read_int(c, ev.context);
        else known = false;
        break;
      case 9:
        if (is(key, "Device Id")) read_int(c, ev.device_id);
        else known = false;
        break;
      case 10:
        if (is(key, "Input Dims") || is(key, "Input dims")) {
          ev.input_dims = c.skip_value();
        } else if (is(key, "Input type")) {
          ev.input_type = c.skip_value();
        } else if (is(key, "sort_index")) read_int(c, ev.sort_index);
        else if (is(key, "src device")) read_int(c, ev.src_device);
        else if (is(key, "dst device")) read_int(c, ev.dst_device);
        else if (is(key, "range kind")) read_text(c, s, ev.range_kind);
        else known = false;
        break;
      case 11:
        if (is(key, "correlation")) read_int(c, ev.correlation);
        else if (is(key, "External id") || is(key, "external id")) read_int(c, ev.external_id);
        else if (is(key, "Device Type")) read_int(c, ev.device_type);
        else if (is(key, "return code")) read_int(c, ev.return_code);
        else if (is(key, "step source")) read_text(c, s, ev.step_source);
        else if (is(key, "recorded ts")) read_time(c, ev.recorded_ts, kTs, ev.invalid);
        else known = false;
        break;
      case 12:
        if (is(key, "recorded dur")) read_time(c, ev.recorded_dur, kDur, ev.invalid);
        else known = false;
        break;
      case 13:
        if (is(key, "Fwd thread id")) read_int(c, ev.fwd_tid);
        else if (is(key, "shared memory")) read_int(c, ev.shared_memory);
        else if (is(key, "graph node id")) read_int(c, ev.graph_node_id);
        else known = false;
        break;
      case 14:
        if (is(key, "Total Reserved")) read_int(c, ev.total_reserved);
        else known = false;
        break;
      case 15:
        if (is(key, "Sequence number")) read_int(c, ev.seq_nr);
        else if (is(key, "Total Allocated")) read_int(c, ev.total_allocated);
        else known = false;
        break;
      case 20:
        if (is(key, "registers per thread")) read_int(c, ev.registers);
        else if (is(key, "static shared memory")) read_int(c, ev.static_smem);
        else known = false;
        break;
      case 21:
        if (is(key, "dynamic shared memory")) read_int(c, ev.dynamic_smem);
        else known = false;
        break;
      default:
        known = false;
    }
    if (!known) {
      // Counter events keep every numeric member; other events skip it.
      if (ev.ph == "C" && c.peek_kind() == Kind::kNumber && !c.bare_word()) {
        if (ev.counters.size() < 64) ev.counters.emplace_back(key, c.number().to_double());
        else c.skip_value();
      } else {
        c.skip_value();
      }
    }
  } while (c.next_member('}'));
}

}  // namespace

std::string_view ascii_lower(std::string_view s, char* buf, size_t cap) {
  size_t n = std::min(s.size(), cap);
  for (size_t i = 0; i < n; ++i) {
    char ch = s[i];
    buf[i] = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
  }
  return {buf, n};
}

void parse_trace_event(Cursor& c, Scratch& s, TraceEvent& ev) {
  ev.clear();
  c.expect('{');
  if (c.consume('}')) return;
  // `args` may come before `ph`; counter values need to know the phase, so
  // the args object is parsed after the other members when it comes first.
  const char* args_at = nullptr;
  do {
    std::string_view key = c.string(s);
    c.expect(':');
    if (is(key, "ph")) read_text(c, s, ev.ph);
    else if (is(key, "cat")) read_text(c, s, ev.cat);
    else if (is(key, "name")) read_text(c, s, ev.name);
    else if (is(key, "pid")) read_id(c, s, ev.pid, "pid out of range", ev.invalid);
    else if (is(key, "tid")) read_id(c, s, ev.tid, "tid out of range", ev.invalid);
    else if (is(key, "ts")) read_time(c, ev.ts, kTs, ev.invalid);
    else if (is(key, "dur")) read_time(c, ev.dur, kDur, ev.invalid);
    else if (is(key, "args")) {
      if (ev.ph.empty()) {
        c.peek();
        args_at = c.p;
        c.skip_value();
      } else {
        read_args(c, s, ev);
      }
    } else c.skip_value();
  } while (c.next_member('}'));
  if (args_at) {
    const char* resume = c.p;
    c.p = args_at;
    read_args(c, s, ev);
    c.p = resume;
  }
  // Our own export moved the event by less than a microsecond for HTA's
  // rounding (trace_formats/export/hta_fit.h): its recorded times.
  if (ev.recorded_ts != kAbsent && ev.recorded_dur != kAbsent && ev.ts != kAbsent && ev.dur != kAbsent) {
    ev.ts = ev.recorded_ts;
    ev.dur = ev.recorded_dur;
  }
}

}  // namespace gpuscope::formats
