// Fixed record layouts written by the application's threads into their own
// ring buffers and read by the writer thread. Each record starts with a
// RecordHeader; text follows the fixed part, its lengths in the fixed part.
#pragma once

#include <cstdint>

namespace gpuscope::collector {

enum class RecordType : uint16_t {
  kPadding = 0,  // filler to the end of the ring; skip to offset 0
  kNvtxPush,
  kNvtxPop,
  kNvtxStart,
  kNvtxEnd,
  kNvtxMark,
  kNvtxDomainName,
  kOp,
  kRange,
  kStep,
  kMemory,
  kCounter,
  kMessage,
  kMeta,
  kExternalCorrelation,
};

struct RecordHeader {
  RecordType type;
  uint16_t reserved;
  uint32_t size;  // whole record, header and text included, multiple of 8
};
static_assert(sizeof(RecordHeader) == 8);

// NVTX push/start/mark. Text: name (name_len bytes).
struct NvtxRangeRecord {
  RecordHeader h;
  uint64_t ts;
  uint64_t domain;    // nvtxDomainHandle_t value, 0 = default domain
  uint64_t range_id;  // start/end ranges only
  uint32_t color;
  uint32_t category;
  uint32_t name_len;
  uint8_t has_color;
  uint8_t pad[3];
};
static_assert(sizeof(NvtxRangeRecord) == 48);

// NVTX pop/end: range_id names the start/end range; domain the push/pop stack.
struct NvtxEndRecord {
  RecordHeader h;
  uint64_t ts;
  uint64_t domain;
  uint64_t range_id;
};
static_assert(sizeof(NvtxEndRecord) == 32);

// nvtxDomainCreate: handle → name. Text: name.
struct NvtxDomainRecord {
  RecordHeader h;
  uint64_t domain;
  uint32_t name_len;
  uint32_t pad;
};
static_assert(sizeof(NvtxDomainRecord) == 24);

// A finished torch op. Text: name, shapes JSON, dtypes JSON.
struct OpRecord {
  RecordHeader h;
  uint64_t start;
  uint64_t end;
  int64_t seq_nr;  // -1 = none
  uint64_t external_id;
  uint32_t depth;
  uint16_t scope;
  uint8_t backward;
  uint8_t pad;
  uint32_t name_len;
  uint32_t shapes_len;
  uint32_t dtypes_len;
  uint32_t pad2;
};
static_assert(sizeof(OpRecord) == 64);

// A finished annotated range (DataLoader wait, optimizer call, record_function).
// Text: name.
struct RangeRecord {
  RecordHeader h;
  uint64_t start;
  uint64_t end;
  uint32_t source;  // enum range_source
  uint32_t depth;
  uint32_t name_len;
  uint32_t pad;
};
static_assert(sizeof(RangeRecord) == 40);

struct StepRecord {
  RecordHeader h;
  uint64_t start;
  uint64_t end;
  int64_t number;
  uint32_t source;  // enum step_source
  uint32_t pad;
};
static_assert(sizeof(StepRecord) == 40);

struct MemoryRecord {
  RecordHeader h;
  uint64_t ts;
  uint64_t address;
  int64_t bytes;  // positive
  int64_t total_allocated;
  int64_t total_reserved;
  int32_t device;
  uint8_t op;      // enum memory_op
  uint8_t source;  // enum memory_source
  uint8_t pad[2];
};
static_assert(sizeof(MemoryRecord) == 56);

// Text: counter name.
struct CounterRecord {
  RecordHeader h;
  uint64_t ts;
  double value;
  int32_t device;  // -1 = host
  uint32_t name_len;
};
static_assert(sizeof(CounterRecord) == 32);

// Text: message (MessageRecord) or key then value (MetaRecord).
struct MessageRecord {
  RecordHeader h;
  uint64_t ts;
  uint32_t severity;
  uint32_t text_len;
};
static_assert(sizeof(MessageRecord) == 24);

struct MetaRecord {
  RecordHeader h;
  uint32_t key_len;
  uint32_t value_len;
};
static_assert(sizeof(MetaRecord) == 16);

struct ExternalCorrelationRecord {
  RecordHeader h;
  uint64_t correlation;
  uint64_t external_id;
};
static_assert(sizeof(ExternalCorrelationRecord) == 24);

inline constexpr uint32_t record_size(uint32_t fixed, uint32_t text) {
  return (fixed + text + 7u) & ~7u;
}

}  // namespace gpuscope::collector
