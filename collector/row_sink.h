// Writer-thread state shared by the CUPTI decoder and the CPU record handler:
// the database, clock origin, recording window, name caches and statistics.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::collector {

struct RowSink {
  explicit RowSink(store::Writer& w) : writer(w) {}

  store::Writer& writer;
  int64_t pid = 0;
  uint64_t origin_ns = 0;
  uint64_t window_start_ns = 0;  // 0 = from the beginning
  uint64_t window_end_ns = 0;    // 0 = to the end

  // Records seen, by statistic key (records_kernel, ...). Keys are string
  // literals, hashed by address on the per-row path; see totals().
  std::unordered_map<const char*, int64_t> stats;
  // Interned demangled kernel names by CUPTI's name pointer (valid while the
  // module is loaded; the collector drains before the CUDA runtime unloads).
  std::unordered_map<const char*, int64_t> kernel_names;
  // API names by (domain << 32 | cbid); noisy: dropped (is_noisy_api).
  struct ApiName {
    std::string name;
    bool noisy = false;
  };
  std::unordered_map<uint64_t, ApiName> api_names;
  // Bytes in use per device from CUDA allocations, for the gpu_memory_used counter.
  std::map<int64_t, int64_t> device_memory;
  // Threads seen making CUDA calls, named by the writer.
  std::unordered_map<uint32_t, bool> api_tids;
  // The latest cudaEventRecord of each event (CUDA_EVENT records), by
  // context << 32 | event id: what a stream wait (SYNCHRONIZATION,
  // stream_wait_event) waited for. Bounded by the events the job made.
  struct EventRecord {
    uint64_t sync_id = 0;  // CUPTI's cudaEventSyncId, shared with the waits on this record
    int64_t correlation = 0, stream = 0;
  };
  std::unordered_map<uint64_t, EventRecord> event_records;

  bool in_window(uint64_t ts) const {
    return ts >= window_start_ns && (window_end_ns == 0 || ts <= window_end_ns);
  }
  int64_t rel(uint64_t ts) const { return static_cast<int64_t>(ts - origin_ns); }

  // A stall the tracer caused (CUPTI's overhead records, gpuscope's own
  // switches): a range of source tracer_overhead on the thread it held.
  void add_tracer_overhead(int64_t tid, std::string_view name, uint64_t start, uint64_t end) {
    store::RangeRow r;
    r.pid = pid;
    r.tid = tid;
    r.source = schema::range_source::tracer_overhead;
    r.kind = schema::range_kind::push_pop;
    r.name = name;
    r.start = rel(start);
    r.end = rel(end > start ? end : start);
    writer.add(r);
  }

  // CUPTI numbers correlation ids from 1 again after cuptiFinalize (sampled
  // tracing tears it down while untraced). The buffers of a new session are
  // decoded after all of the old one's (cupti_source::drain), and its ids are
  // shifted past every id stored so far, so they stay unique in the process.
  // (Telling a restart from the ids themselves failed on the H200: the first
  // buffer of a session can hold kernels launched after many API calls.)
  void begin_cupti_session(uint32_t session) {
    if (session == corr_session_) return;
    corr_session_ = session;
    corr_offset_ = corr_max_stored_;
    count("cupti_sessions_after_first");
    // CUPTI freed the old session's names; their addresses may come back.
    kernel_names.clear();
    last_api_corr_.clear();
    corr_broken_ = false;
  }
  // Every API call gets its own id, so one thread's API records never repeat
  // one. On the H200 a session after a teardown once gave a whole stretch's
  // API calls (7 264) one id: such a session's ids link nothing right, and
  // from that record on they are stored as 0 (no link).
  void note_api_correlation(uint32_t tid, uint32_t raw) {
    if (raw == 0 || corr_broken_) return;
    auto [it, fresh] = last_api_corr_.try_emplace(tid, raw);
    if (!fresh && it->second == raw) {
      corr_broken_ = true;
      corr_ever_broken_ = true;
      count("cupti_correlation_repeated");
    }
    it->second = raw;
  }
  bool correlation_ever_broken() const { return corr_ever_broken_; }
  int64_t correlation(uint32_t raw) {
    if (raw == 0) return 0;
    if (corr_broken_) {
      count("correlation_dropped");
      return 0;
    }
    const int64_t stored = corr_offset_ + raw;
    if (stored > corr_max_stored_) corr_max_stored_ = stored;
    return stored;
  }
  void count(const char* key, int64_t n = 1) { stats[key] += n; }
  // Statistics by name (the same literal may have several addresses).
  std::map<std::string, int64_t> totals() const {
    std::map<std::string, int64_t> out;
    for (const auto& [key, value] : stats) out[key] += value;
    return out;
  }

 private:
  uint32_t corr_session_ = 0;
  int64_t corr_offset_ = 0;
  bool corr_broken_ = false;       // this session's ids repeat (see note_api_correlation)
  bool corr_ever_broken_ = false;
  std::unordered_map<uint32_t, uint32_t> last_api_corr_;  // thread -> last API record's id
  int64_t corr_max_stored_ = 0;
};

}  // namespace gpuscope::collector
