#include "collector/emit.h"

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector/thread_slots.h"

namespace gpuscope::collector {

std::atomic<bool> g_enabled{false};

namespace {

uint32_t clip(std::string_view s) {
  return static_cast<uint32_t>(s.size() < kMaxTextBytes ? s.size() : kMaxTextBytes);
}

// Copies a short text (names, shapes: tens of bytes). GCC turns a memcpy of a
// variable size into `rep movsq`, whose start-up cost made three of them most
// of an op record's ~100 ns; 16-byte moves (the last one overlapping) avoid it.
inline void copy_text(uint8_t* d, const char* s, size_t n) {
#if defined(__SSE2__)
  if (n >= 16) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    if (i < n)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + n - 16), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + n - 16)));
    return;
  }
  if (n >= 8) {
    std::memcpy(d, s, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
    return;
  }
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(s[i]);
#else
  std::memcpy(d, s, n);
#endif
}

// Reserves fixed + texts, copies the fixed part (header fields set here) and the texts.
template <class Fixed>
bool put(RecordType type, Fixed fixed, std::initializer_list<std::string_view> texts) {
  if (!enabled()) return false;
  uint32_t text_bytes = 0;
  for (auto t : texts) text_bytes += clip(t);
  uint32_t size = record_size(sizeof(Fixed), text_bytes);
  uint8_t* p = reserve_record(type, size);
  if (!p) return false;
  fixed.h = *reinterpret_cast<RecordHeader*>(p);
  // Word by word: every record is a multiple of 8 bytes, and a plain memcpy of
  // it compiled to `rep movsq`, whose start-up cost dominated a ~100 ns emit.
  static_assert(sizeof(Fixed) % 8 == 0);
  for (size_t i = 0; i < sizeof(Fixed); i += 8) std::memcpy(p + i, reinterpret_cast<const uint8_t*>(&fixed) + i, 8);
  uint8_t* out = p + sizeof(Fixed);
  for (auto t : texts) {
    copy_text(out, t.data(), clip(t));
    out += clip(t);
  }
  commit_record();
  return true;
}

}  // namespace

void emit_nvtx_range(RecordType type, uint64_t ts, uint64_t domain, uint64_t range_id,
                     std::string_view name, bool has_color, uint32_t color, uint32_t category) {
  NvtxRangeRecord r{};
  r.ts = ts;
  r.domain = domain;
  r.range_id = range_id;
  r.color = color;
  r.category = category;
  r.name_len = clip(name);
  r.has_color = has_color;
  put(type, r, {name});
}

void emit_nvtx_end(RecordType type, uint64_t ts, uint64_t domain, uint64_t range_id) {
  NvtxEndRecord r{};
  r.ts = ts;
  r.domain = domain;
  r.range_id = range_id;
  put(type, r, {});
}

void emit_nvtx_domain(uint64_t domain, std::string_view name) {
  NvtxDomainRecord r{};
  r.domain = domain;
  r.name_len = clip(name);
  put(RecordType::kNvtxDomainName, r, {name});
}

namespace {

// The hottest record (one per torch op) is written field by field straight
// into the ring. Copying it through put() cost ~20 ns in the traced process:
// the caller's struct, just written with 8-byte stores, was read back with
// 16-byte loads, which the CPU cannot forward from those stores (a stall
// each, twice: the caller's struct, then put()'s copy of it). GCC's SLP
// vectorizer turns adjacent field copies into such loads, hence the
// attribute on the functions that inline this.
#if defined(__GNUC__) && !defined(__clang__)
#define GPUSCOPE_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define GPUSCOPE_NO_SLP
#endif

inline __attribute__((always_inline)) void write_op(uint64_t start, uint64_t end, int64_t seq_nr, uint64_t external_id,
                                                    uint32_t depth, uint16_t scope, uint8_t backward,
                                                    std::string_view name, std::string_view shapes,
                                                    std::string_view dtypes) {
  if (!enabled()) return;
  const uint32_t name_len = clip(name), shapes_len = clip(shapes), dtypes_len = clip(dtypes);
  uint8_t* p = reserve_record(RecordType::kOp, record_size(sizeof(OpRecord), name_len + shapes_len + dtypes_len));
  if (!p) return;
  auto* r = reinterpret_cast<OpRecord*>(p);  // header already set by reserve_record
  r->start = start;
  r->end = end;
  r->seq_nr = seq_nr;
  r->external_id = external_id;
  r->depth = depth;
  r->scope = scope;
  r->backward = backward;
  r->pad = 0;
  r->name_len = name_len;
  r->shapes_len = shapes_len;
  r->dtypes_len = dtypes_len;
  r->pad2 = 0;
  uint8_t* out = p + sizeof(OpRecord);
  copy_text(out, name.data(), name_len);
  copy_text(out + name_len, shapes.data(), shapes_len);
  copy_text(out + name_len + shapes_len, dtypes.data(), dtypes_len);
  commit_record();
}

}  // namespace

GPUSCOPE_NO_SLP void emit_op(const OpRecord& f, std::string_view name, std::string_view shapes,
                             std::string_view dtypes) {
  write_op(f.start, f.end, f.seq_nr, f.external_id, f.depth, f.scope, f.backward, name, shapes, dtypes);
}

GPUSCOPE_NO_SLP void emit_op(const gpuscope_op& op) {
  write_op(op.start_ns, op.end_ns, op.seq_nr, op.external_id, op.depth, op.scope, op.backward,
           {op.name ? op.name : "", op.name ? op.name_len : 0u},
           {op.shapes ? op.shapes : "", op.shapes ? op.shapes_len : 0u},
           {op.dtypes ? op.dtypes : "", op.dtypes ? op.dtypes_len : 0u});
}

void emit_range(uint64_t start, uint64_t end, uint32_t source, uint32_t depth, std::string_view name) {
  RangeRecord r{};
  r.start = start;
  r.end = end;
  r.source = source;
  r.depth = depth;
  r.name_len = clip(name);
  put(RecordType::kRange, r, {name});
}

void emit_step(uint64_t start, uint64_t end, int64_t number, uint32_t source) {
  StepRecord r{};
  r.start = start;
  r.end = end;
  r.number = number;
  r.source = source;
  put(RecordType::kStep, r, {});
}

void emit_memory(const MemoryRecord& fixed) { put(RecordType::kMemory, fixed, {}); }

void emit_counter(uint64_t ts, int32_t device, std::string_view name, double value) {
  CounterRecord r{};
  r.ts = ts;
  r.value = value;
  r.device = device;
  r.name_len = clip(name);
  put(RecordType::kCounter, r, {name});
}

void emit_message(uint64_t ts, uint32_t severity, std::string_view text) {
  MessageRecord r{};
  r.ts = ts;
  r.severity = severity;
  r.text_len = clip(text);
  put(RecordType::kMessage, r, {text});
}

void emit_meta(std::string_view key, std::string_view value) {
  MetaRecord r{};
  r.key_len = clip(key);
  r.value_len = clip(value);
  put(RecordType::kMeta, r, {key, value});
}

void emit_external_correlation(uint64_t correlation, uint64_t external_id) {
  ExternalCorrelationRecord r{};
  r.correlation = correlation;
  r.external_id = external_id;
  put(RecordType::kExternalCorrelation, r, {});
}

}  // namespace gpuscope::collector
