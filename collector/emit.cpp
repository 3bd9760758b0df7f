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

void emit_op(const OpRecord& fixed, std::string_view name, std::string_view shapes,
             std::string_view dtypes) {
  OpRecord r = fixed;
  r.name_len = clip(name);
  r.shapes_len = clip(shapes);
  r.dtypes_len = clip(dtypes);
  put(RecordType::kOp, r, {name, shapes, dtypes});
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
