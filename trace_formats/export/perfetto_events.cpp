// The single time-ordered pass of the Perfetto export.
//
// Every table is read once in rowid order into TimedRows, each table's rows
// sorted (they usually already are), and the tables merged. That replaced a
// UNION ALL ... ORDER BY whose sorter, plus correlation joins, was three
// quarters of the export. Holding the rows costs 64 bytes each (66 MB for the
// 500 MB benchmark trace, about what SQLite's sorter took); past
// ExportOptions::perfetto_rows_in_memory rows, SQLite sorts them instead and
// memory stays flat. Both give the same order: start, longer first, source,
// row id.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "trace_formats/export/exporters.h"
#include "trace_formats/export/perfetto_writer.h"
#include "trace_formats/import/kineto_names.h"
#include "trace_formats/store/coverage.h"
#include "trace_formats/store/event_stream.h"

namespace gpuscope::formats {

namespace {

std::string n(int64_t v) { return std::to_string(v); }

namespace range_kind = schema::range_kind;
using namespace store::rec;  // the row structs of records.h: Kernel, Op, Step, ...

// What the export does with each column of the tables it turns into events:
// the in-memory pass reads exactly the *Read columns (TimedRows below, a
// visitor of the event stream, which checks that each column is read or left
// out), and merged_query() selects the same ones. Left out on purpose: a Perfetto slice carries a
// name, times and a track but no args (the Chrome export carries those), and
// the row id only orders ties, as row order does in the in-memory pass.
constexpr Range::Column kRangeRead[] = {Range::kPid,      Range::kTid,    Range::kSource, Range::kKind,
                                        Range::kDomainId, Range::kNameId, Range::kStart,  Range::kEnd,
                                        Range::kCategory};
constexpr Range::Column kRangeLeftOut[] = {Range::kId, Range::kDepth, Range::kColor};

constexpr Op::Column kOpRead[] = {Op::kPid, Op::kTid, Op::kNameId, Op::kStart, Op::kEnd};
constexpr Op::Column kOpLeftOut[] = {Op::kId,    Op::kDepth,    Op::kSeqNr,    Op::kBackward,
                                     Op::kScope, Op::kShapesId, Op::kDtypesId, Op::kExternalId};

constexpr ApiCall::Column kApiCallRead[] = {ApiCall::kPid,   ApiCall::kTid, ApiCall::kDomain,     ApiCall::kNameId,
                                            ApiCall::kStart, ApiCall::kEnd, ApiCall::kCorrelation};
constexpr ApiCall::Column kApiCallLeftOut[] = {ApiCall::kId, ApiCall::kCbid, ApiCall::kReturnCode};

constexpr Kernel::Column kKernelRead[] = {Kernel::kPid,   Kernel::kDevice, Kernel::kStream, Kernel::kCorrelation,
                                          Kernel::kStart, Kernel::kEnd,    Kernel::kNameId};
constexpr Kernel::Column kKernelLeftOut[] = {Kernel::kId,         Kernel::kContext,    Kernel::kGridX,
                                             Kernel::kGridY,      Kernel::kGridZ,      Kernel::kBlockX,
                                             Kernel::kBlockY,     Kernel::kBlockZ,     Kernel::kRegisters,
                                             Kernel::kStaticSmem, Kernel::kDynamicSmem, Kernel::kGraphId,
                                             Kernel::kGraphNodeId};

constexpr Memcpy::Column kMemcpyRead[] = {Memcpy::kPid,   Memcpy::kDevice, Memcpy::kStream,   Memcpy::kCorrelation,
                                          Memcpy::kStart, Memcpy::kEnd,    Memcpy::kCopyKind, Memcpy::kSrcKind,
                                          Memcpy::kDstKind};
constexpr Memcpy::Column kMemcpyLeftOut[] = {Memcpy::kId,        Memcpy::kContext,   Memcpy::kBytes,
                                             Memcpy::kSrcDevice, Memcpy::kDstDevice, Memcpy::kGraphId};

constexpr Memset::Column kMemsetRead[] = {Memset::kPid,   Memset::kDevice, Memset::kStream, Memset::kCorrelation,
                                          Memset::kStart, Memset::kEnd,    Memset::kMemKind};
constexpr Memset::Column kMemsetLeftOut[] = {Memset::kId, Memset::kContext, Memset::kBytes, Memset::kValue,
                                             Memset::kGraphId};

// Syncs go on their process's "CUDA sync" lane, so not even the thread is kept.
// A stream wait's stream and correlations are read apart, by EventWaits
// (event_waits.h), for the arrow from the event's record to the waiting work.
// An event sync's correlation names the arrow from the work it waited for (EventSyncs).
constexpr Sync::Column kSyncRead[] = {Sync::kPid, Sync::kType, Sync::kStart, Sync::kEnd, Sync::kCorrelation};
constexpr Sync::Column kSyncLeftOut[] = {Sync::kId,    Sync::kTid,        Sync::kContext,
                                         Sync::kStream, Sync::kEvent,     Sync::kWaitStream,
                                         Sync::kEventCorrelation};

constexpr Step::Column kStepRead[] = {Step::kPid, Step::kNumber, Step::kStart, Step::kEnd};
constexpr Step::Column kStepLeftOut[] = {Step::kId, Step::kSource};

constexpr Counter::Column kCounterRead[] = {Counter::kPid, Counter::kDevice, Counter::kNameId, Counter::kTs,
                                            Counter::kValue};
constexpr Counter::Column kCounterLeftOut[] = {Counter::kId};

// Only the torch allocator's totals become counters; single allocations are not drawn.
constexpr MemoryEvent::Column kMemoryEventRead[] = {MemoryEvent::kPid, MemoryEvent::kDevice, MemoryEvent::kTs,
                                                    MemoryEvent::kTotalAllocated, MemoryEvent::kTotalReserved};
constexpr MemoryEvent::Column kMemoryEventLeftOut[] = {
    MemoryEvent::kId,      MemoryEvent::kOp,    MemoryEvent::kSource, MemoryEvent::kMemKind,
    MemoryEvent::kAddress, MemoryEvent::kBytes, MemoryEvent::kStream, MemoryEvent::kCorrelation};

// The rows in write order, for when they are too many to hold.
// Columns: s, e, src, k1, k2, k3, nm, x1, x2, x3, corr, corr_ok, val.
std::string merged_query(ExportModel& m, std::optional<int64_t> skip_steps_pid) {
  // coalesce: NOT (NULL IN ...) is NULL, which would drop every range without a domain.
  const std::string gpu_annotation =
      "coalesce(r.domain_id, -1) IN (SELECT id FROM string WHERE value='gpu_user_annotation')";
  // NULL times read as 0, as in the in-memory path.
  const std::string times = "ifnull(start, 0), ifnull(\"end\", 0), ";
  std::string q = "SELECT * FROM (";
  q += "SELECT ifnull(r.start, 0) AS s, ifnull(coalesce(r.\"end\", r.start), 0) AS e, " + n(kSrcRange) +
       " AS src, r.pid AS k1, r.tid AS k2, 0 AS k3, r.name_id AS nm, r.source AS x1, 0 AS x2, 0 AS x3,"
       " 0 AS corr, 0 AS corr_ok, 0.0 AS val, r.id AS id FROM range r WHERE r.kind = " + n(range_kind::push_pop) +
       " AND NOT " + gpu_annotation + m.and_pid("r.");
  q += " UNION ALL SELECT " + times + n(kSrcOp) + ", pid, tid, 0, name_id, 0, 0, 0, 0, 0, 0.0, id FROM op" +
       m.where_pid();
  q += " UNION ALL SELECT " + times + n(kSrcApi) + ", pid, tid, 0, name_id, domain, 0, 0, correlation,"
       " pid IS NOT NULL AND correlation IS NOT NULL, 0.0, id FROM api_call" + m.where_pid();
  q += " UNION ALL SELECT " + times + n(kSrcKernel) + ", pid, device, stream, name_id, 0, 0, 0, correlation,"
       " pid IS NOT NULL AND correlation IS NOT NULL, 0.0, id FROM kernel" + m.where_pid();
  q += " UNION ALL SELECT " + times + n(kSrcMemcpy) + ", pid, device, stream, -1, copy_kind, src_kind, dst_kind,"
       " correlation, pid IS NOT NULL AND correlation IS NOT NULL, 0.0, id FROM memcpy" + m.where_pid();
  q += " UNION ALL SELECT " + times + n(kSrcMemset) + ", pid, device, stream, -1, mem_kind, 0, 0, correlation,"
       " pid IS NOT NULL AND correlation IS NOT NULL, 0.0, id FROM memset" + m.where_pid();
  // Start/end ranges may overlap without nesting; GPU annotations overlap kernels.
  q += " UNION ALL SELECT ifnull(r.start, 0), ifnull(coalesce(r.\"end\", r.start), 0), " + n(kSrcLaneRange) +
       ", r.pid, r.tid, 0, r.name_id, 0, 0, 0, 0, 0, 0.0, r.id FROM range r WHERE r.kind = " +
       n(range_kind::start_end) + " AND NOT " + gpu_annotation + m.and_pid("r.");
  q += " UNION ALL SELECT ifnull(r.start, 0), ifnull(coalesce(r.\"end\", r.start), 0), " + n(kSrcGpuAnnotation) +
       ", r.pid, coalesce(r.category, 0), r.tid, r.name_id, 0, 0, 0, 0, 0, 0.0, r.id FROM range r WHERE " +
       gpu_annotation + m.and_pid("r.");
  q += " UNION ALL SELECT ifnull(r.start, 0), ifnull(r.start, 0), " + n(kSrcMark) +
       ", r.pid, r.tid, 0, r.name_id, 0, 0, 0, 0, 0, 0.0, r.id FROM range r WHERE r.kind = " + n(range_kind::mark) +
       " AND NOT " + gpu_annotation + m.and_pid("r.");
  q += " UNION ALL SELECT " + times + n(kSrcSync) + ", pid, type, 0, -1, type, 0, 0, correlation,"
       " pid IS NOT NULL AND correlation IS NOT NULL, 0.0, id FROM sync" + m.where_pid();
  q += " UNION ALL SELECT " + times + n(kSrcStep) + ", pid, 0, 0, -1, number, 0, 0, 0, 0, 0.0, id FROM step" +
       m.where_pid();
  if (skip_steps_pid) q += (m.where_pid().empty() ? " WHERE pid != " : " AND pid != ") + n(*skip_steps_pid);
  q += " UNION ALL SELECT ifnull(ts, 0), ifnull(ts, 0), " + n(kSrcCounter) +
       ", pid, coalesce(device, -1), device IS NULL, name_id, 0, 0, 0, 0, 0, value, id FROM counter" + m.where_pid();
  q += " UNION ALL SELECT ifnull(ts, 0), ifnull(ts, 0), " + n(kSrcMemory) +
       ", pid, device, 0, -1, total_allocated, coalesce(total_reserved, -1), total_reserved IS NULL, 0, 0, 0.0, id"
       " FROM memory_event WHERE total_allocated IS NOT NULL" + m.and_pid();
  q += ") ORDER BY s, e DESC, src, id";
  return q;
}

// A push/pop range's flags from its source: a Python function's (kAlt), or
// CUPTI's overhead record (kTracer), each drawn under its own category.
uint8_t range_flags(int64_t source) {
  if (source == kRangePython) return TimedRow::kAlt;
  if (source == schema::range_source::tracer_overhead) return TimedRow::kTracer;
  return 0;
}

// A string id as a slice name; negative ids (never written by gpuscope) name nothing.
int64_t slice_name(RowTexts& texts, int64_t id) { return id >= 0 ? id : texts.name_of(""); }

double as_double(int64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

int64_t bits_of(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// An API call's or GPU row's correlation, and whether it can match (SQL's `=`
// never matches NULL).
template <class R>
void correlate(const R& row, TimedRow& r) {
  r.x = row.correlation_or_zero();
  if (row.null(R::kPid)) r.flags |= TimedRow::kNullPid;
  else if (!row.null(R::kCorrelation)) r.flags |= TimedRow::kCorrelated;
}

// Where and when a kernel, copy or set ran, and its correlation.
template <class R>
TimedRow gpu_row(const R& row) {
  TimedRow r;
  r.k1 = row.pid_or_zero();
  r.k2 = row.device_or_zero();
  r.k3 = row.stream_or_zero();
  correlate(row, r);
  r.start = row.start_or_zero();
  r.end = row.end_or_zero();
  return r;
}

// Distinct processes per device over the GPU tables, for stream track names.
void count_device_pids(store::Reader& reader, std::map<int64_t, int>& pids_by_device) {
  auto q = reader.query(
      "SELECT device, count(DISTINCT pid) AS pids FROM (SELECT device, pid FROM kernel UNION SELECT device, pid"
      " FROM memcpy UNION SELECT device, pid FROM memset) GROUP BY device");
  const int device = q.column("device"), pids = q.column("pids");
  while (q.step()) pids_by_device[q.int64(device)] = static_cast<int>(q.int64(pids));
}

// The in-memory pass as a visitor of the event stream: each row becomes a
// TimedRow of its source, appended in table order (the sort is stable, so
// ties keep it).
class TimedRows {
 public:
  using Rows = std::vector<TimedRow>[kSourceCount];
  // `gpu_domain`: the string id of the GPU annotations' domain, if any.
  TimedRows(Rows& rows, RowTexts& texts, std::optional<int64_t> gpu_domain, std::optional<int64_t> skip_steps_pid)
      : rows_(rows), texts_(texts), gpu_domain_(gpu_domain), skip_steps_pid_(skip_steps_pid) {}

  template <class R, const auto& Read, const auto& LeftOut>
  using Columns = store::events::Columns<R, Read, LeftOut>;
  template <class R>
  using Tag = store::events::Tag<R>;
  static Columns<Step, kStepRead, kStepLeftOut> columns(Tag<Step>);
  static Columns<Op, kOpRead, kOpLeftOut> columns(Tag<Op>);
  static Columns<Range, kRangeRead, kRangeLeftOut> columns(Tag<Range>);
  static Columns<ApiCall, kApiCallRead, kApiCallLeftOut> columns(Tag<ApiCall>);
  static Columns<Kernel, kKernelRead, kKernelLeftOut> columns(Tag<Kernel>);
  static Columns<Memcpy, kMemcpyRead, kMemcpyLeftOut> columns(Tag<Memcpy>);
  static Columns<Memset, kMemsetRead, kMemsetLeftOut> columns(Tag<Memset>);
  static Columns<Sync, kSyncRead, kSyncLeftOut> columns(Tag<Sync>);
  static Columns<MemoryEvent, kMemoryEventRead, kMemoryEventLeftOut> columns(Tag<MemoryEvent>);
  static Columns<Counter, kCounterRead, kCounterLeftOut> columns(Tag<Counter>);

  void on(const Range& g) {
    TimedRow r;
    r.k1 = g.pid_or_zero();
    r.k2 = g.tid_or_zero();
    r.name = slice_name(texts_, g.name_id_or_zero());
    r.start = g.start_or_zero();
    r.end = g.null(Range::kEnd) ? r.start : g.end;
    const int64_t kind = g.kind_or_zero();
    if (gpu_domain_ && !g.null(Range::kDomainId) && g.domain_id == *gpu_domain_) {
      r.k3 = r.k2;
      r.k2 = g.category_or_zero();
      add(kSrcGpuAnnotation, r);
    } else if (kind == range_kind::push_pop) {
      r.flags |= range_flags(g.source_or_zero());
      add(kSrcRange, r);
    } else if (kind == range_kind::start_end) {
      add(kSrcLaneRange, r);
    } else if (kind == range_kind::mark) {
      r.end = r.start;
      add(kSrcMark, r);
    }
  }
  void on(const Op& o) {
    TimedRow r;
    r.k1 = o.pid_or_zero();
    r.k2 = o.tid_or_zero();
    r.name = slice_name(texts_, o.name_id_or_zero());
    r.start = o.start_or_zero();
    r.end = o.end_or_zero();
    add(kSrcOp, r);
  }
  void on(const ApiCall& a) {
    TimedRow r;
    r.k1 = a.pid_or_zero();
    r.k2 = a.tid_or_zero();
    if (a.domain_or_zero() == schema::api_domain::driver) r.flags = TimedRow::kAlt;
    r.name = slice_name(texts_, a.name_id_or_zero());
    r.start = a.start_or_zero();
    r.end = a.end_or_zero();
    correlate(a, r);
    add(kSrcApi, r);
  }
  void on(const Kernel& k) {
    TimedRow r = gpu_row(k);
    r.name = slice_name(texts_, k.name_id_or_zero());
    add(kSrcKernel, r);
  }
  void on(const Memcpy& c) {
    TimedRow r = gpu_row(c);
    r.name = texts_.name_of(memcpy_name(c.copy_kind_or_zero(), c.src_kind_or_zero(), c.dst_kind_or_zero()));
    add(kSrcMemcpy, r);
  }
  void on(const Memset& s) {
    TimedRow r = gpu_row(s);
    r.name = texts_.name_of(memset_name(s.mem_kind_or_zero()));
    add(kSrcMemset, r);
  }
  void on(const Sync& y) {
    TimedRow r;
    r.k1 = y.pid_or_zero();
    r.k2 = y.type_or_zero();
    r.x = y.correlation_or_zero();
    if (!y.null(Sync::kPid) && !y.null(Sync::kCorrelation)) r.flags = TimedRow::kCorrelated;
    r.name = texts_.name_of(std::string(sync_name(y.type_or_zero())));
    r.start = y.start_or_zero();
    r.end = y.end_or_zero();
    add(kSrcSync, r);
  }
  void on(const Step& t) {
    if (skip_steps_pid_ && t.pid_or_zero() == *skip_steps_pid_) return;  // replaced (set_steps)
    TimedRow r;
    r.k1 = t.pid_or_zero();
    r.name = texts_.name_of("step " + n(t.number_or_zero()));
    r.start = t.start_or_zero();
    r.end = t.end_or_zero();
    add(kSrcStep, r);
  }
  void on(const Counter& c) {
    TimedRow r;
    r.k1 = c.pid_or_zero();
    if (c.null(Counter::kDevice)) {
      r.k2 = -1;
      r.flags = TimedRow::kAlt;
    } else {
      r.k2 = c.device;
    }
    r.name = c.name_id_or_zero();
    r.start = r.end = c.ts_or_zero();
    r.x = bits_of(c.value);  // NULL reads as 0.0
    add(kSrcCounter, r);
  }
  void on(const MemoryEvent& e) {
    if (e.null(MemoryEvent::kTotalAllocated)) return;  // a single allocation
    TimedRow r;
    r.k1 = e.pid_or_zero();
    r.k2 = e.device_or_zero();
    r.start = r.end = e.ts_or_zero();
    r.x = e.total_allocated;
    if (e.null(MemoryEvent::kTotalReserved)) {
      r.k3 = -1;
      r.flags = TimedRow::kAlt;
    } else {
      r.k3 = e.total_reserved;
    }
    add(kSrcMemory, r);
  }

 private:
  void add(Source src, const TimedRow& r) {
    rows_[src].push_back(r);
    rows_[src].back().src = src;
  }
  Rows& rows_;
  RowTexts& texts_;
  std::optional<int64_t> gpu_domain_, skip_steps_pid_;
};

}  // namespace

std::vector<store::TableUse> perfetto_table_uses() {
  constexpr std::string_view kConsumer = "perfetto export";
  return {store::events::use<Range, TimedRows>(kConsumer),  store::events::use<Op, TimedRows>(kConsumer),
          store::events::use<ApiCall, TimedRows>(kConsumer), store::events::use<Kernel, TimedRows>(kConsumer),
          store::events::use<Memcpy, TimedRows>(kConsumer),  store::events::use<Memset, TimedRows>(kConsumer),
          store::events::use<Sync, TimedRows>(kConsumer),    store::events::use<Step, TimedRows>(kConsumer),
          store::events::use<Counter, TimedRows>(kConsumer), store::events::use<MemoryEvent, TimedRows>(kConsumer)};
}

void PerfettoWriter::row(const TimedRow& r) {
  switch (r.src) {
    case kSrcRange:
      open_slice(thread_track(r.k1, r.k2), r.start, r.end,
                 (r.flags & TimedRow::kAlt)      ? kPythonFunction
                 : (r.flags & TimedRow::kTracer) ? kOverhead
                                                 : kUserAnnotation,
                 r.name, 0, 0);
      break;
    case kSrcOp:
      open_slice(thread_track(r.k1, r.k2), r.start, r.end, kCpuOp, r.name, 0, 0);
      break;
    case kSrcApi: {
      uint64_t flow = 0;
      const std::vector<size_t>* waits = nullptr;
      if (r.flags & TimedRow::kCorrelated) {
        if (const auto* c = m_.correlations().find(r.k1, r.x); c && c->gpu) flow = m_.flow_id(r.k1, r.x);
        waits = waits_.recorded_by(r.k1, r.x);
      }
      open_slice(thread_track(r.k1, r.k2), r.start, r.end, (r.flags & TimedRow::kAlt) ? kCudaDriver : kCudaRuntime,
                 r.name, flow, 0, waits);
      break;
    }
    case kSrcKernel:
    case kSrcMemcpy:
    case kSrcMemset: {
      uint64_t flow = 0;
      waits_in_.clear();
      if (r.flags & TimedRow::kCorrelated) {
        if (const auto* c = m_.correlations().find(r.k1, r.x); c && c->api) flow = m_.flow_id(r.k1, r.x);
        waits_.take_waiting(r.k1, r.k3, r.x, [&](size_t w) { waits_in_.push_back(w); });
      }
      syncs_out_.clear();
      if (r.flags & TimedRow::kCorrelated)
        if (const std::vector<size_t>* syncs = event_syncs_.synced_by(r.k1, r.x))
          for (size_t i : *syncs)
            if (event_syncs_.syncs()[i].start >= r.start)
              syncs_out_.push_back(m_.flow_id(r.k1, event_syncs_.syncs()[i].correlation));
      uint64_t cat = r.src == kSrcKernel ? kKernel : r.src == kSrcMemcpy ? kMemcpy : kMemset;
      open_slice(stream_track(r.k1, r.k2, r.k3), r.start, r.end, cat, r.name, 0, flow, nullptr,
                 waits_in_.empty() ? nullptr : &waits_in_, syncs_out_.empty() ? nullptr : &syncs_out_);
      break;
    }
    case kSrcLaneRange:
      open_slice(lane_track(kLane, r.k1, r.k2, r.start, r.end, thread_track(r.k1, r.k2), "ranges " + n(r.k2)),
                 r.start, r.end, kUserAnnotation, r.name, 0, 0);
      break;
    case kSrcGpuAnnotation:
      open_slice(lane_track(kAnnotation, r.k2, r.k3, r.start, r.end, gpu_track(r.k2),
                            "stream " + n(r.k3) + " annotations"),
                 r.start, r.end, kGpuUserAnnotation, r.name, 0, 0);
      break;
    case kSrcMark:
      instant(thread_track(r.k1, r.k2), r.start, kInstant, r.name);
      break;
    case kSrcSync: {
      // An event sync's arrow ends here where its work started before it (load_event_syncs).
      uint64_t flow = 0;
      if (r.k2 == schema::sync_type::event_synchronize && (r.flags & TimedRow::kCorrelated))
        if (const EventSyncs::Work* w = event_syncs_.work_of(r.k1, r.x); w && w->ts <= r.start)
          flow = m_.flow_id(r.k1, r.x);
      open_slice(lane_track(kSync, r.k1, 0, r.start, r.end, process_track(r.k1), "CUDA sync"), r.start, r.end,
                 kCudaSync, r.name, 0, flow);
      break;
    }
    case kSrcStep:
      open_slice(lane_track(kSteps, r.k1, 0, r.start, r.end, process_track(r.k1), "steps"), r.start, r.end, kStep,
                 r.name, 0, 0);
      break;
    case kSrcCounter: {
      bool host = r.flags & TimedRow::kAlt;
      uint64_t track = counter_track(Key{kCounter, r.k1, r.k2, r.name}, host ? process_track(r.k1) : gpu_track(r.k2),
                                     std::string(m_.str(r.name)), false);
      counter_value(track, r.start, as_double(r.x));
      break;
    }
    case kSrcMemory: {
      uint64_t parent = r.k2 >= 0 ? gpu_track(r.k2) : process_track(r.k1);
      uint64_t alloc = counter_track(Key{kCounter, r.k1, r.k2, -1}, parent, "torch allocated", true);
      uint64_t reserved = (r.flags & TimedRow::kAlt)
                              ? 0 : counter_track(Key{kCounter, r.k1, r.k2, -2}, parent, "torch reserved", true);
      counter_value(alloc, r.start, double(r.x));
      if (reserved) counter_value(reserved, r.start, double(r.k3));
      break;
    }
    case kSrcGpuscope:
      if (r.start == r.end) instant(gpuscope_track(), r.start, kGpuscope, r.name);
      else open_slice(gpuscope_track(), r.start, r.end, kGpuscope, r.name, 0, 0);
      break;
    case kSourceCount:
      break;
  }
  if ((++rows_ & 0x3FFF) == 0) progress_.update(rows_, total_rows_, "rows", events_);
}

void PerfettoWriter::write_sorted_by_sqlite() {
  m_.load_correlations(ExportModel::kGpuActivity | ExportModel::kApiCalls);
  count_device_pids(m_.reader(), stream_pids_);
  start_sequence();
  auto q = m_.reader().query(merged_query(m_, steps_pid_));
  const int s = q.column("s"), e = q.column("e"), src = q.column("src"), k1 = q.column("k1"), k2 = q.column("k2"),
            k3 = q.column("k3"), nm = q.column("nm"), x1 = q.column("x1"), x2 = q.column("x2"), x3 = q.column("x3"),
            corr = q.column("corr"), corr_ok = q.column("corr_ok"), val = q.column("val");
  TimedRow r;
  // gpuscope's marks and the replaced steps where the in-memory merge puts them.
  std::vector<TimedRow> side = steps_;
  side.insert(side.end(), marks_.begin(), marks_.end());
  std::stable_sort(side.begin(), side.end(), row_before);
  auto mark = side.begin();
  while (q.step()) {
    r.start = q.int64(s);
    r.end = q.int64(e);
    r.src = static_cast<Source>(q.int64(src));
    r.k1 = q.int64(k1);
    r.k2 = q.int64(k2);
    r.k3 = q.int64(k3);
    r.name = q.int64(nm);
    r.x = q.int64(corr);
    r.flags = q.int64(corr_ok) ? TimedRow::kCorrelated : 0;
    switch (r.src) {
      case kSrcRange:
        r.flags = range_flags(q.int64(x1));
        [[fallthrough]];
      case kSrcOp:
      case kSrcLaneRange:
      case kSrcGpuAnnotation:
      case kSrcMark:
      case kSrcKernel:
        r.name = slice_name(texts_, r.name);
        break;
      case kSrcApi:
        r.name = slice_name(texts_, r.name);
        if (q.int64(x1) == schema::api_domain::driver) r.flags |= TimedRow::kAlt;
        break;
      case kSrcMemcpy: r.name = texts_.name_of(memcpy_name(q.int64(x1), q.int64(x2), q.int64(x3))); break;
      case kSrcMemset: r.name = texts_.name_of(memset_name(q.int64(x1))); break;
      case kSrcSync: r.name = texts_.name_of(std::string(sync_name(q.int64(x1)))); break;
      case kSrcStep: r.name = texts_.name_of("step " + n(q.int64(x1))); break;
      case kSrcCounter:
        r.flags = r.k3 ? TimedRow::kAlt : 0;
        r.x = bits_of(q.real(val));
        break;
      case kSrcMemory:
        r.x = q.int64(x1);
        r.k3 = q.int64(x2);
        r.flags = q.int64(x3) ? TimedRow::kAlt : 0;
        break;
      case kSrcGpuscope:
      case kSourceCount: break;
    }
    for (; mark != side.end() && row_before(*mark, r); ++mark) row(*mark);
    row(r);
  }
  for (; mark != side.end(); ++mark) row(*mark);
}

bool PerfettoWriter::write_sorted_in_memory(uint64_t limit) {
  std::map<std::string, size_t> count;
  uint64_t total = 0;
  for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "step", "memory_event",
                        "counter"})
    total += count[t] = m_.count_rows(t);
  if (total > limit) return false;

  std::vector<TimedRow> rows[kSourceCount];
  rows[kSrcOp].reserve(count["op"]);
  rows[kSrcApi].reserve(count["api_call"]);
  rows[kSrcKernel].reserve(count["kernel"]);
  rows[kSrcMemcpy].reserve(count["memcpy"]);
  rows[kSrcMemset].reserve(count["memset"]);
  store::Connection& db = m_.reader().db();
  TimedRows visitor(rows, texts_, db.query_int("SELECT id FROM string WHERE value='gpu_user_annotation'"),
                    steps_pid_);
  store::events::visit_all(db, visitor, {.pid = m_.only_pid()});

  rows[kSrcGpuscope] = marks_;
  rows[kSrcStep].insert(rows[kSrcStep].end(), steps_.begin(), steps_.end());

  // Flow arrows need both ends: mark which correlations have which.
  CorrelationMap& corr = m_.correlations();
  for (const TimedRow& r : rows[kSrcApi])
    if ((r.flags & TimedRow::kCorrelated) && r.x != 0) corr.upsert(r.k1, r.x).api = true;
  std::set<std::pair<int64_t, int64_t>> device_pids;
  std::pair<int64_t, int64_t> last_device_pid{INT64_MIN, INT64_MIN};
  for (Source s : {kSrcKernel, kSrcMemcpy, kSrcMemset})
    for (const TimedRow& r : rows[s]) {
      if ((r.flags & TimedRow::kCorrelated) && r.x != 0) corr.upsert(r.k1, r.x).gpu = true;
      // count(DISTINCT pid) leaves NULL out.
      if (!(r.flags & TimedRow::kNullPid) && std::make_pair(r.k2, r.k1) != last_device_pid)
        device_pids.insert(last_device_pid = {r.k2, r.k1});
    }
  if (m_.where_pid().empty()) {
    for (const auto& [device, pid] : device_pids) ++stream_pids_[device];
  } else {
    // Stream names count every process on the device, not only the exported one.
    count_device_pids(m_.reader(), stream_pids_);
  }

  // Tables are usually in time order already; stable keeps row ids in order on ties.
  for (auto& v : rows)
    if (!std::is_sorted(v.begin(), v.end(), row_before)) std::stable_sort(v.begin(), v.end(), row_before);

  // Merge: heads kept sorted, so the next row is always heads[0].
  struct Head {
    const TimedRow* p;
    const TimedRow* end;
  };
  std::vector<Head> heads;
  for (auto& v : rows)
    if (!v.empty()) heads.push_back({v.data(), v.data() + v.size()});
  std::sort(heads.begin(), heads.end(), [](const Head& a, const Head& b) { return row_before(*a.p, *b.p); });
  start_sequence();
  while (!heads.empty()) {
    Head& h = heads[0];
    row(*h.p);
    if (++h.p == h.end) {
      heads.erase(heads.begin());
      continue;
    }
    for (size_t i = 1; i < heads.size() && row_before(*heads[i].p, *heads[i - 1].p); ++i)
      std::swap(heads[i], heads[i - 1]);
  }
  return true;
}

}  // namespace gpuscope::formats
