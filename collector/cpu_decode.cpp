#include "collector/cpu_decode.h"

#include <string_view>

#include "gpuscope/plugin.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::collector {

using store::kNull;

// A plugin's codes reach the rows as they are (RangeRecord.source,
// StepRecord.source, MemoryRecord.op, MessageRecord.severity). The plugin ABI
// declares them without gpuscope's headers, so they are tied to the schema here.
constexpr bool same(int64_t abi, int64_t schema_code) { return abi == schema_code; }
static_assert(same(GPUSCOPE_RANGE_TORCH_USER, schema::range_source::torch_user) &&
              same(GPUSCOPE_RANGE_DATALOADER, schema::range_source::dataloader) &&
              same(GPUSCOPE_RANGE_OPTIMIZER, schema::range_source::optimizer) &&
              same(GPUSCOPE_RANGE_PROFILER_STEP, schema::range_source::profiler_step) &&
              same(GPUSCOPE_RANGE_TORCH_OTHER, schema::range_source::torch_other));
static_assert(same(GPUSCOPE_STEP_PROFILER_STEP, schema::step_source::profiler_step) &&
              same(GPUSCOPE_STEP_OPTIMIZER, schema::step_source::optimizer_step));
static_assert(same(GPUSCOPE_MEMORY_ALLOC, schema::memory_op::alloc) &&
              same(GPUSCOPE_MEMORY_FREE, schema::memory_op::free));
static_assert(same(GPUSCOPE_INFO, schema::severity::info) && same(GPUSCOPE_WARNING, schema::severity::warning) &&
              same(GPUSCOPE_ERROR, schema::severity::error));

namespace {

template <class T>
const T& as(const RecordHeader& h) {
  return *reinterpret_cast<const T*>(&h);
}

std::string_view text_after(const RecordHeader& h, size_t fixed, size_t offset, size_t len) {
  return {reinterpret_cast<const char*>(&h) + fixed + offset, len};
}

}  // namespace

void CpuDecoder::write_range(RowSink& sink, uint32_t tid, uint64_t domain, int64_t kind, uint64_t start,
                             int64_t end, int64_t depth, std::string_view name, int64_t color,
                             int64_t category) {
  if (!sink.in_window(start)) return;
  store::RangeRow r;
  r.pid = sink.pid;
  r.tid = tid;
  r.source = schema::range_source::nvtx;
  r.kind = kind;
  if (domain) {
    auto it = domains_.find(domain);
    r.domain = it != domains_.end() ? std::string_view(it->second) : std::string_view("<unnamed domain>");
  }
  r.name = name;
  r.start = sink.rel(start);
  r.end = end;
  r.depth = depth;
  r.color = color;
  r.category = category;
  sink.writer.add(r);
  sink.count("records_nvtx");
}

void CpuDecoder::handle(const RecordHeader& h, Thread& t, RowSink& sink) {
  switch (h.type) {
    case RecordType::kNvtxPush:
    case RecordType::kNvtxStart:
    case RecordType::kNvtxMark: {
      const auto& r = as<NvtxRangeRecord>(h);
      std::string_view name = text_after(h, sizeof r, 0, r.name_len);
      int64_t color = r.has_color ? int64_t{r.color} : kNull;
      int64_t category = r.category ? int64_t{r.category} : kNull;
      if (h.type == RecordType::kNvtxPush)
        t.stacks[r.domain].push_back({r.ts, std::string(name), color, category});
      else if (h.type == RecordType::kNvtxStart)
        start_end_[r.range_id] = {t.tid, r.domain, r.ts, std::string(name), color, category};
      else
        write_range(sink, t.tid, r.domain, schema::range_kind::mark, r.ts, sink.rel(r.ts), kNull, name, color,
                    category);
      break;
    }
    case RecordType::kNvtxPop: {
      const auto& r = as<NvtxEndRecord>(h);
      auto& stack = t.stacks[r.domain];
      if (stack.empty()) {
        sink.count("nvtx_unmatched_pop");
        break;
      }
      const auto& open = stack.back();
      write_range(sink, t.tid, r.domain, schema::range_kind::push_pop, open.start, sink.rel(r.ts),
                  static_cast<int64_t>(stack.size() - 1), open.name, open.color, open.category);
      stack.pop_back();
      break;
    }
    case RecordType::kNvtxEnd: {
      const auto& r = as<NvtxEndRecord>(h);
      auto it = start_end_.find(r.range_id);
      if (it == start_end_.end()) {
        sink.count("nvtx_unmatched_end");
        break;
      }
      const auto& o = it->second;
      write_range(sink, o.tid, o.domain, schema::range_kind::start_end, o.start, sink.rel(r.ts), kNull, o.name,
                  o.color, o.category);
      start_end_.erase(it);
      break;
    }
    case RecordType::kNvtxDomainName: {
      const auto& r = as<NvtxDomainRecord>(h);
      domains_[r.domain] = std::string(text_after(h, sizeof r, 0, r.name_len));
      break;
    }
    case RecordType::kOp: {
      const auto& r = as<OpRecord>(h);
      if (!sink.in_window(r.start)) break;
      store::OpRow row;
      row.pid = sink.pid;
      row.tid = t.tid;
      row.name = text_after(h, sizeof r, 0, r.name_len);
      row.shapes = text_after(h, sizeof r, r.name_len, r.shapes_len);
      row.dtypes = text_after(h, sizeof r, r.name_len + r.shapes_len, r.dtypes_len);
      row.start = sink.rel(r.start);
      row.end = sink.rel(r.end);
      row.depth = r.depth;
      row.seq_nr = r.seq_nr >= 0 ? r.seq_nr : kNull;
      row.backward = r.backward;
      row.scope = r.scope;
      row.external_id = r.external_id ? static_cast<int64_t>(r.external_id) : kNull;
      sink.writer.add(row);
      sink.count("records_op");
      break;
    }
    case RecordType::kRange: {
      const auto& r = as<RangeRecord>(h);
      if (!sink.in_window(r.start)) break;
      store::RangeRow row;
      row.pid = sink.pid;
      row.tid = t.tid;
      row.source = r.source;
      row.kind = schema::range_kind::push_pop;
      row.name = text_after(h, sizeof r, 0, r.name_len);
      row.start = sink.rel(r.start);
      row.end = sink.rel(r.end);
      row.depth = r.depth;
      sink.writer.add(row);
      sink.count("records_range");
      break;
    }
    case RecordType::kStep: {
      const auto& r = as<StepRecord>(h);
      if (!sink.in_window(r.start)) break;
      store::StepRow row;
      row.pid = sink.pid;
      row.number = r.number;
      row.start = sink.rel(r.start);
      row.end = sink.rel(r.end);
      row.source = r.source;
      sink.writer.add(row);
      sink.count("records_step");
      break;
    }
    case RecordType::kMemory: {
      const auto& r = as<MemoryRecord>(h);
      if (!sink.in_window(r.ts)) break;
      store::MemoryEventRow row;
      row.pid = sink.pid;
      row.device = r.device;
      row.ts = sink.rel(r.ts);
      row.op = r.op;
      row.source = r.source;
      row.mem_kind = r.device >= 0 ? schema::mem_kind::device : schema::mem_kind::unknown;  // host: kind unknown
      row.address = static_cast<int64_t>(r.address);
      row.bytes = r.bytes;
      row.total_allocated = r.total_allocated;
      row.total_reserved = r.total_reserved;
      sink.writer.add(row);
      sink.count("records_torch_memory");
      break;
    }
    case RecordType::kCounter: {
      const auto& r = as<CounterRecord>(h);
      if (!sink.in_window(r.ts)) break;
      store::CounterRow row;
      row.pid = sink.pid;
      row.device = r.device >= 0 ? int64_t{r.device} : kNull;
      row.name = text_after(h, sizeof r, 0, r.name_len);
      row.ts = sink.rel(r.ts);
      row.value = r.value;
      sink.writer.add(row);
      sink.count("records_counter");
      break;
    }
    case RecordType::kMessage: {
      const auto& r = as<MessageRecord>(h);
      store::MessageRow row;
      row.pid = sink.pid;
      row.ts = sink.rel(r.ts);
      row.severity = r.severity;
      row.text = text_after(h, sizeof r, 0, r.text_len);
      sink.writer.add(row);
      break;
    }
    case RecordType::kMeta: {
      const auto& r = as<MetaRecord>(h);
      sink.writer.set_meta(text_after(h, sizeof r, 0, r.key_len),
                           text_after(h, sizeof r, r.key_len, r.value_len));
      break;
    }
    case RecordType::kExternalCorrelation: {
      const auto& r = as<ExternalCorrelationRecord>(h);
      store::ExternalCorrelationRow row;
      row.pid = sink.pid;
      row.correlation = static_cast<int64_t>(r.correlation);
      row.external_id = static_cast<int64_t>(r.external_id);
      sink.writer.put(row);
      break;
    }
    case RecordType::kPadding:
      break;
    default:
      sink.count("records_unknown_cpu");
      break;
  }
}

void CpuDecoder::flush_open(Thread& t, RowSink& sink) {
  for (auto& [domain, stack] : t.stacks) {
    for (size_t i = 0; i < stack.size(); ++i)
      write_range(sink, t.tid, domain, schema::range_kind::push_pop, stack[i].start, kNull, static_cast<int64_t>(i),
                  stack[i].name, stack[i].color, stack[i].category);
    stack.clear();
  }
}

void CpuDecoder::flush_open_start_end(RowSink& sink) {
  for (auto& [id, o] : start_end_)
    write_range(sink, o.tid, o.domain, schema::range_kind::start_end, o.start, kNull, kNull, o.name, o.color,
                o.category);
  start_end_.clear();
}

}  // namespace gpuscope::collector
