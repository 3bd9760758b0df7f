// The viewer's loader as a visitor of the recording's event stream
// (trace_formats/store/event_stream.h): one on() a kind, each turning a row
// into an Event of a track or a sample of a counter. The parts of the load
// visit the kinds they show, each with its own EventLoad: load_gpu.cpp the GPU
// kinds and load_cpu.cpp the host kinds, in id ranges on several threads;
// load_counters.cpp steps, counters and memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gui/model/parallel_read.h"
#include "gui/model/recording_loader.h"
#include "trace_formats/store/event_stream.h"

namespace gpuscope::gui {

namespace rec = store::rec;

namespace load_columns {

// The viewer reads what it draws and what its indexes need; the details panel
// reads the rest of a row when it is selected (details.cpp).
inline constexpr rec::Kernel::Column kKernelRead[] = {rec::Kernel::kId,     rec::Kernel::kPid,
                                                      rec::Kernel::kDevice, rec::Kernel::kStream,
                                                      rec::Kernel::kCorrelation, rec::Kernel::kStart,
                                                      rec::Kernel::kEnd,    rec::Kernel::kNameId};
inline constexpr rec::Kernel::Column kKernelLeftOut[] = {
    rec::Kernel::kContext, rec::Kernel::kGridX,     rec::Kernel::kGridY,      rec::Kernel::kGridZ,
    rec::Kernel::kBlockX,  rec::Kernel::kBlockY,    rec::Kernel::kBlockZ,     rec::Kernel::kRegisters,
    rec::Kernel::kStaticSmem, rec::Kernel::kDynamicSmem, rec::Kernel::kGraphId, rec::Kernel::kGraphNodeId};
// A copy is named by its direction; its bytes go to the copy summary.
inline constexpr rec::Memcpy::Column kMemcpyRead[] = {rec::Memcpy::kId,     rec::Memcpy::kPid,
                                                      rec::Memcpy::kDevice, rec::Memcpy::kStream,
                                                      rec::Memcpy::kCorrelation, rec::Memcpy::kStart,
                                                      rec::Memcpy::kEnd,    rec::Memcpy::kCopyKind,
                                                      rec::Memcpy::kBytes};
inline constexpr rec::Memcpy::Column kMemcpyLeftOut[] = {rec::Memcpy::kContext,   rec::Memcpy::kSrcKind,
                                                         rec::Memcpy::kDstKind,   rec::Memcpy::kSrcDevice,
                                                         rec::Memcpy::kDstDevice, rec::Memcpy::kGraphId};
inline constexpr rec::Memset::Column kMemsetRead[] = {rec::Memset::kId,     rec::Memset::kPid,
                                                      rec::Memset::kDevice, rec::Memset::kStream,
                                                      rec::Memset::kCorrelation, rec::Memset::kStart,
                                                      rec::Memset::kEnd};
inline constexpr rec::Memset::Column kMemsetLeftOut[] = {rec::Memset::kContext, rec::Memset::kBytes,
                                                         rec::Memset::kValue, rec::Memset::kMemKind,
                                                         rec::Memset::kGraphId};
inline constexpr rec::ApiCall::Column kApiCallRead[] = {rec::ApiCall::kId,     rec::ApiCall::kPid,
                                                        rec::ApiCall::kTid,    rec::ApiCall::kNameId,
                                                        rec::ApiCall::kStart,  rec::ApiCall::kEnd,
                                                        rec::ApiCall::kCorrelation};
inline constexpr rec::ApiCall::Column kApiCallLeftOut[] = {rec::ApiCall::kDomain, rec::ApiCall::kCbid,
                                                           rec::ApiCall::kReturnCode};
// A wait is drawn on its thread; what it waited for is in the details.
inline constexpr rec::Sync::Column kSyncRead[] = {rec::Sync::kId,    rec::Sync::kPid, rec::Sync::kTid,
                                                  rec::Sync::kType,  rec::Sync::kStart, rec::Sync::kEnd,
                                                  rec::Sync::kCorrelation};
inline constexpr rec::Sync::Column kSyncLeftOut[] = {rec::Sync::kContext, rec::Sync::kStream, rec::Sync::kEvent,
                                                     rec::Sync::kWaitStream, rec::Sync::kEventCorrelation};
// Ops nest by time in lanes, so their recorded depth is not needed.
inline constexpr rec::Op::Column kOpRead[] = {rec::Op::kId,     rec::Op::kPid,   rec::Op::kTid,
                                              rec::Op::kNameId, rec::Op::kStart, rec::Op::kEnd};
inline constexpr rec::Op::Column kOpLeftOut[] = {rec::Op::kDepth,    rec::Op::kSeqNr,    rec::Op::kBackward,
                                                 rec::Op::kScope,    rec::Op::kShapesId, rec::Op::kDtypesId,
                                                 rec::Op::kExternalId};
inline constexpr rec::Range::Column kRangeRead[] = {rec::Range::kId,     rec::Range::kPid,  rec::Range::kTid,
                                                    rec::Range::kSource, rec::Range::kKind, rec::Range::kNameId,
                                                    rec::Range::kStart,  rec::Range::kEnd,  rec::Range::kColor};
inline constexpr rec::Range::Column kRangeLeftOut[] = {rec::Range::kDomainId, rec::Range::kDepth,
                                                       rec::Range::kCategory};
// Step markers carry their number, not how the step was found.
inline constexpr rec::Step::Column kStepRead[] = {rec::Step::kPid, rec::Step::kNumber, rec::Step::kStart,
                                                  rec::Step::kEnd};
inline constexpr rec::Step::Column kStepLeftOut[] = {rec::Step::kId, rec::Step::kSource};
inline constexpr rec::Counter::Column kCounterRead[] = {rec::Counter::kPid, rec::Counter::kDevice,
                                                        rec::Counter::kNameId, rec::Counter::kTs,
                                                        rec::Counter::kValue};
inline constexpr rec::Counter::Column kCounterLeftOut[] = {rec::Counter::kId};
// Memory is drawn as totals over time, not as single allocations.
inline constexpr rec::MemoryEvent::Column kMemoryRead[] = {
    rec::MemoryEvent::kPid,    rec::MemoryEvent::kDevice, rec::MemoryEvent::kTs,
    rec::MemoryEvent::kOp,     rec::MemoryEvent::kSource, rec::MemoryEvent::kBytes,
    rec::MemoryEvent::kTotalAllocated, rec::MemoryEvent::kTotalReserved};
inline constexpr rec::MemoryEvent::Column kMemoryLeftOut[] = {rec::MemoryEvent::kId, rec::MemoryEvent::kMemKind,
                                                              rec::MemoryEvent::kAddress, rec::MemoryEvent::kStream,
                                                              rec::MemoryEvent::kCorrelation};

}  // namespace load_columns

// A row's events by a key (a GPU stream, a CPU thread). Consecutive rows
// almost always hit the same key: the last lookup is cached.
template <class Key>
struct KeyedEvents {
  EventMap<Key> lists;
  Key last_key{};
  std::vector<Event>* last = nullptr;
  std::vector<Event>& at(const Key& k) {
    if (!last || k != last_key) {
      last = &lists[k];
      last_key = k;
    }
    return *last;
  }
};

using StreamKey = std::tuple<int64_t, int64_t, int64_t>;  // device, pid, stream
using ThreadKey = std::pair<int64_t, int64_t>;            // pid, tid (or one of the tid keys below)

inline constexpr int64_t kAsyncTrack = -1;   // tid key of a process's start/end ranges
inline constexpr int64_t kSyncTrack = -2;    // tid key of waits with no known thread
inline constexpr int64_t kTracedTrack = -4;  // tid key of a sampled recording's traced stretches

// Each process's last flush (process.end), where it is known.
using FlushEnds = std::unordered_map<int64_t, int64_t>;

class EventLoad {
 public:
  // `flush`: for host ranges never closed (load_cpu.cpp).
  EventLoad(LoadContext& ctx, std::string stage, const FlushEnds* flush = nullptr)
      : ctx_(ctx), info_(*ctx.info), stage_(std::move(stage)), flush_(flush) {}

  template <class R, const auto& Read, const auto& LeftOut>
  using Columns = store::events::Columns<R, Read, LeftOut>;
  template <class R>
  using Tag = store::events::Tag<R>;
  static Columns<rec::Step, load_columns::kStepRead, load_columns::kStepLeftOut> columns(Tag<rec::Step>);
  static Columns<rec::Op, load_columns::kOpRead, load_columns::kOpLeftOut> columns(Tag<rec::Op>);
  static Columns<rec::Range, load_columns::kRangeRead, load_columns::kRangeLeftOut> columns(Tag<rec::Range>);
  static Columns<rec::ApiCall, load_columns::kApiCallRead, load_columns::kApiCallLeftOut> columns(
      Tag<rec::ApiCall>);
  static Columns<rec::Kernel, load_columns::kKernelRead, load_columns::kKernelLeftOut> columns(Tag<rec::Kernel>);
  static Columns<rec::Memcpy, load_columns::kMemcpyRead, load_columns::kMemcpyLeftOut> columns(Tag<rec::Memcpy>);
  static Columns<rec::Memset, load_columns::kMemsetRead, load_columns::kMemsetLeftOut> columns(Tag<rec::Memset>);
  static Columns<rec::Sync, load_columns::kSyncRead, load_columns::kSyncLeftOut> columns(Tag<rec::Sync>);
  static Columns<rec::MemoryEvent, load_columns::kMemoryRead, load_columns::kMemoryLeftOut> columns(
      Tag<rec::MemoryEvent>);
  static Columns<rec::Counter, load_columns::kCounterRead, load_columns::kCounterLeftOut> columns(
      Tag<rec::Counter>);
  // Step markers by time; memory by time, so that the CUDA totals add up in order.
  static constexpr std::string_view order(Tag<rec::Step>) { return "start, pid"; }
  static constexpr std::string_view order(Tag<rec::MemoryEvent>) { return "ts, id"; }

  // Each returns false once the load is cancelled (checked with progress).
  // Inline, and defined in the one file that visits the kind, so that the
  // scan's loop holds the method's body as it held the loaders' lambdas (a
  // call a row measured slower on the 2 M-event load).
  inline bool on(const rec::Kernel& k);  // load_gpu.cpp
  inline bool on(const rec::Memcpy& m);
  inline bool on(const rec::Memset& m);
  inline bool on(const rec::ApiCall& a);  // load_cpu.cpp
  inline bool on(const rec::Sync& s);
  inline bool on(const rec::Op& o);
  inline bool on(const rec::Range& g);
  bool on(const rec::Step& s);  // load_counters.cpp
  bool on(const rec::Counter& c);
  bool on(const rec::MemoryEvent& e);

  // Reports the rows read since the last report.
  void report_rows() {
    if (pending_) ctx_.rows(pending_, stage_);
    pending_ = 0;
  }

  // What the rows became.
  KeyedEvents<StreamKey> streams;
  std::vector<int64_t> copy_bytes = std::vector<int64_t>(16, 0);  // by copy kind
  KeyedEvents<ThreadKey> threads;
  std::vector<StepMarker> steps;
  // Counter samples by (device, pid, name id): device -1 for host counters, pid -1 for device ones.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<CounterSample>> counters;
  struct Memory {
    std::vector<CounterSample> allocated, reserved, cuda;
    int64_t cuda_total = 0;
  };
  std::map<std::pair<int64_t, int64_t>, Memory> memory;  // by (device, pid)

 private:
  // Counts a row; every kProgressEvery rows reports them and checks for cancel.
  bool row_read() {
    if (++pending_ < kProgressEvery) return true;
    report_rows();
    return !ctx_.cancelled();
  }
  LoadContext& ctx_;
  const RecordingInfo& info_;
  std::string stage_;
  const FlushEnds* flush_;
  int64_t pending_ = 0;
};

// Visits kind R's rows whose id lies in `range` with `v`, on a connection of
// its own; false when the load was cancelled meanwhile.
template <class R>
bool visit_ids(LoadContext& ctx, EventLoad& v, IdRange range) {
  store::Reader r(ctx.database);
  const bool done = store::events::visit<R>(r.db(), v, {.ids = std::pair<int64_t, int64_t>{range.lo, range.hi}});
  v.report_rows();
  return done;
}

// Visits the kinds Rs in parallel: each table split into id ranges
// (split_ids), each range read by an EventLoad of its own on its own
// connection and its lists sorted; the loads, to merge (merge_sorted). The
// caller checks ctx.cancelled() after. Instantiated where the kinds' on()
// bodies are defined (load_gpu.cpp, load_cpu.cpp), so the scans inline them.
template <class... Rs>
std::vector<EventLoad> visit_in_parallel(LoadContext& ctx, store::Reader& r, const std::string& stage,
                                         const FlushEnds* flush = nullptr) {
  struct Task {
    bool (*visit)(LoadContext&, EventLoad&, IdRange);
    IdRange range;
  };
  std::vector<Task> tasks;
  auto add = [&]<class R>(store::events::Tag<R>) {
    for (const IdRange& range : split_ids(r, std::string(R::kTable), reader_threads()))
      tasks.push_back({visit_ids<R>, range});
  };
  (add(store::events::Tag<Rs>{}), ...);
  std::vector<EventLoad> loads;
  loads.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) loads.emplace_back(ctx, stage, flush);
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < tasks.size(); ++i)
    jobs.push_back([&, i] {
      if (!tasks[i].visit(ctx, loads[i], tasks[i].range)) return;
      sort_lists(loads[i].streams.lists);
      sort_lists(loads[i].threads.lists);
    });
  run_parallel(jobs);
  return loads;
}

}  // namespace gpuscope::gui
