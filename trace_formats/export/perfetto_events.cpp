// The single time-ordered pass of the Perfetto export.
#include <chrono>

#include "export/exporters.h"
#include "export/perfetto_writer.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

namespace {

// What each row of the merged query is.
enum Source : int64_t {
  kSrcRange = 0, kSrcOp, kSrcApi, kSrcKernel, kSrcMemcpy, kSrcMemset, kSrcLaneRange, kSrcGpuAnnotation,
  kSrcMark, kSrcSync, kSrcStep, kSrcCounter, kSrcMemory
};

// coalesce: NOT (NULL IN ...) is NULL, which would drop every range without a domain.
const char* kIsGpuAnnotation =
    "coalesce(r.domain_id, -1) IN (SELECT id FROM string WHERE value='gpu_user_annotation')";

std::string n(int64_t v) { return std::to_string(v); }

// Columns: start, e(nd), src, k1, k2, k3, name_id, x1, x2, x3, corr, flow, value, rk.
// On equal start, longer first (parents before children), then ranges, ops, API calls.
std::string merged_query(ExportModel& m) {
  std::string q = "SELECT * FROM (";
  // Push/pop annotations on their thread.
  q += "SELECT r.start AS s, coalesce(r.\"end\", r.start) AS e, " + n(kSrcRange) +
       " AS src, r.pid AS k1, r.tid AS k2, 0 AS k3, r.name_id AS nm, r.source AS x1, 0 AS x2, 0 AS x3,"
       " 0 AS corr, 0 AS flow, 0.0 AS val, 0 AS rk FROM range r WHERE r.kind = 1 AND NOT " +
       kIsGpuAnnotation + m.and_pid("r.");
  q += " UNION ALL SELECT start, \"end\", " + n(kSrcOp) + ", pid, tid, 0, name_id, 0, 0, 0, 0, 0, 0.0, 1 FROM op" +
       m.where_pid();
  q += " UNION ALL SELECT a.start, a.\"end\", " + n(kSrcApi) +
       ", a.pid, a.tid, 0, a.name_id, a.domain, 0, 0, a.correlation, 0, 0.0, 2 FROM api_call a" +
       m.where_pid("a.");
  q += " UNION ALL SELECT g.start, g.\"end\", " + n(kSrcKernel) +
       ", g.pid, g.device, g.stream, g.name_id, 0, 0, 0, g.correlation, 0, 0.0, 3 FROM kernel g" +
       m.where_pid("g.");
  q += " UNION ALL SELECT g.start, g.\"end\", " + n(kSrcMemcpy) +
       ", g.pid, g.device, g.stream, -1, g.copy_kind, g.src_kind, g.dst_kind, g.correlation, 0,"
       " 0.0, 3 FROM memcpy g" + m.where_pid("g.");
  q += " UNION ALL SELECT g.start, g.\"end\", " + n(kSrcMemset) +
       ", g.pid, g.device, g.stream, -1, g.mem_kind, 0, 0, g.correlation, 0, 0.0, 3 FROM memset g" +
       m.where_pid("g.");
  // Start/end ranges may overlap without nesting; GPU annotations overlap kernels.
  q += " UNION ALL SELECT r.start, coalesce(r.\"end\", r.start), " + n(kSrcLaneRange) +
       ", r.pid, r.tid, 0, r.name_id, 0, 0, 0, 0, 0, 0.0, 4 FROM range r WHERE r.kind = 2 AND NOT " +
       kIsGpuAnnotation + m.and_pid("r.");
  q += " UNION ALL SELECT r.start, coalesce(r.\"end\", r.start), " + n(kSrcGpuAnnotation) +
       ", r.pid, coalesce(r.category, 0), r.tid, r.name_id, 0, 0, 0, 0, 0, 0.0, 4 FROM range r WHERE " +
       kIsGpuAnnotation + m.and_pid("r.");
  q += " UNION ALL SELECT r.start, r.start, " + n(kSrcMark) +
       ", r.pid, r.tid, 0, r.name_id, 0, 0, 0, 0, 0, 0.0, 5 FROM range r WHERE r.kind = 3 AND NOT " +
       kIsGpuAnnotation + m.and_pid("r.");
  q += " UNION ALL SELECT start, \"end\", " + n(kSrcSync) + ", pid, 0, 0, -1, type, 0, 0, 0, 0, 0.0, 6 FROM sync" +
       m.where_pid();
  q += " UNION ALL SELECT start, \"end\", " + n(kSrcStep) + ", pid, 0, 0, -1, number, 0, 0, 0, 0, 0.0, 7 FROM step" +
       m.where_pid();
  q += " UNION ALL SELECT ts, ts, " + n(kSrcCounter) +
       ", pid, coalesce(device, -1), device IS NULL, name_id, 0, 0, 0, 0, 0, value, 8 FROM counter" + m.where_pid();
  q += " UNION ALL SELECT ts, ts, " + n(kSrcMemory) +
       ", pid, device, 0, -1, total_allocated, coalesce(total_reserved, -1), total_reserved IS NULL, 0, 0, 0.0, 8"
       " FROM memory_event WHERE total_allocated IS NOT NULL" + m.and_pid();
  q += ") ORDER BY s, e DESC, rk";
  return q;
}

}  // namespace

void PerfettoWriter::row(store::Statement& q) {
  int64_t start = q.int64(0), end = q.int64(1), k1 = q.int64(3), k2 = q.int64(4), k3 = q.int64(5);
  int64_t name = q.int64(6);
  Slice& s = slice_;
  s.start = start;
  s.end = end;
  s.name_id = name < 0 ? INT64_MIN : name;  // -1: the name is built into s.text below
  s.flow_in = s.flow_out = 0;
  switch (static_cast<Source>(q.int64(2))) {
    case kSrcRange:
      s.cat = q.int64(7) == kRangePython ? kPythonFunction : kUserAnnotation;
      open_slice(thread_track(k1, k2), s);
      break;
    case kSrcOp:
      s.cat = kCpuOp;
      open_slice(thread_track(k1, k2), s);
      break;
    case kSrcApi:
      s.cat = q.int64(7) == 2 ? kCudaDriver : kCudaRuntime;
      if (const auto* c = m_.correlation(q, 3, k1, 10, q.int64(10)); c && c->gpu) s.flow_out = m_.flow_id(k1, q.int64(10));
      open_slice(thread_track(k1, k2), s);
      break;
    case kSrcKernel:
    case kSrcMemcpy:
    case kSrcMemset: {
      auto src = static_cast<Source>(q.int64(2));
      s.cat = src == kSrcKernel ? kKernel : src == kSrcMemcpy ? kMemcpy : kMemset;
      if (src == kSrcMemcpy) s.text = memcpy_name(q.int64(7), q.int64(8), q.int64(9));
      if (src == kSrcMemset) s.text = memset_name(q.int64(7));
      if (const auto* c = m_.correlation(q, 3, k1, 10, q.int64(10)); c && c->api) s.flow_in = m_.flow_id(k1, q.int64(10));
      open_slice(stream_track(k1, k2, k3), s);
      break;
    }
    case kSrcLaneRange:
      s.cat = kUserAnnotation;
      open_slice(lane_track(kLane, k1, k2, start, end, thread_track(k1, k2), "ranges " + std::to_string(k2)), s);
      break;
    case kSrcGpuAnnotation:
      s.cat = kGpuUserAnnotation;
      open_slice(lane_track(kAnnotation, k2, k3, start, end, gpu_track(k2), "stream " + std::to_string(k3) +
                                                                               " annotations"), s);
      break;
    case kSrcMark:
      instant(thread_track(k1, k2), start, kInstant, name);
      break;
    case kSrcSync:
      s.cat = kCudaSync;
      s.text = sync_name(q.int64(7));
      open_slice(lane_track(kSync, k1, 0, start, end, process_track(k1), "CUDA sync"), s);
      break;
    case kSrcStep:
      s.cat = kStep;
      s.text = "step " + std::to_string(q.int64(7));
      open_slice(lane_track(kSteps, k1, 0, start, end, process_track(k1), "steps"), s);
      break;
    case kSrcCounter: {
      bool host = k3 != 0;
      Key key{kCounter, k1, k2, name};
      uint64_t track = counter_track(key, host ? process_track(k1) : gpu_track(k2), std::string(m_.str(name)), false);
      counter_value(track, start, q.real(12));
      break;
    }
    case kSrcMemory: {
      uint64_t parent = k2 >= 0 ? gpu_track(k2) : process_track(k1);
      uint64_t alloc = counter_track(Key{kCounter, k1, k2, -1}, parent, "torch allocated", true);
      uint64_t reserved = q.int64(9) ? 0 : counter_track(Key{kCounter, k1, k2, -2}, parent, "torch reserved", true);
      counter_value(alloc, start, double(q.int64(7)));
      if (reserved) counter_value(reserved, start, double(q.int64(8)));
      break;
    }
  }
  if ((++rows_ & 0x3FFF) == 0) progress_.update(rows_, total_rows_, "rows", events_);
}

void PerfettoWriter::write_all() {
  m_.load_api_calls();
  auto devs = m_.reader().query(
      "SELECT device, count(DISTINCT pid) FROM (SELECT device, pid FROM kernel UNION SELECT device, pid FROM memcpy"
      " UNION SELECT device, pid FROM memset) GROUP BY device");
  while (devs.step()) stream_pids_[devs.int64(0)] = static_cast<int>(devs.int64(1));

  start_sequence();
  auto q = m_.reader().query(merged_query(m_));
  while (q.step()) row(q);
  close_until(INT64_MAX);
  if (!buf_.empty()) out_.write(buf_);
  buf_.clear();
}

ExportStats export_perfetto(store::Reader& db, const std::string& path, const ExportOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  ExportModel model(db, opt.only_pid);
  OutputFile out(path, opt.force);
  Progress progress("exporting " + path, opt.progress);
  uint64_t total = 0;
  if (opt.progress)
    for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "step", "memory_event",
                          "counter"})
      total += static_cast<uint64_t>(
          db.db().query_int("SELECT count(*) FROM " + std::string(t) + model.where_pid()).value_or(0));
  PerfettoWriter w(model, out, progress, total);
  w.write_all();
  progress.done();
  ExportStats s;
  s.events = w.events();
  s.raw_bytes = out.bytes_in();
  s.bytes = out.commit();
  s.files.push_back(path);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace gpuscope::formats
