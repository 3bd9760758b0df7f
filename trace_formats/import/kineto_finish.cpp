// The end of an import: what streaming could not settle while events went by.
#include <algorithm>

#include "trace_formats/import/kineto_mapper.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/cursor.h"

namespace gpuscope::formats {

namespace {

constexpr int64_t kPendingPid = -(int64_t{1} << 40);

// Time columns of every table the importer fills.
struct TimeColumns {
  const char* table;
  const char* columns[2];
};
constexpr TimeColumns kTimeColumns[] = {
    {"kernel", {"start", "end"}}, {"memcpy", {"start", "end"}},     {"memset", {"start", "end"}},
    {"api_call", {"start", "end"}}, {"sync", {"start", "end"}},     {"range", {"start", "end"}},
    {"op", {"start", "end"}},     {"step", {"start", "end"}},       {"memory_event", {"ts", nullptr}},
    {"counter", {"ts", nullptr}},
};

// Nesting depth from a sorted pass, for inputs whose events were not in
// start order per thread (the streaming stack assumes they are). R: the op or
// the range table.
template <class R>
void recompute_depth(store::Connection& db, const std::string& where) {
  store::Cursor<R> sel(db, {R::kId, R::kPid, R::kTid, R::kStart, R::kEnd},
                       where + " ORDER BY pid, tid, start, \"end\" DESC");
  store::Statement upd = db.prepare("UPDATE \"" + std::string(R::kTable) + "\" SET depth=? WHERE id=?");
  std::vector<int64_t> ends;
  int64_t pid = INT64_MIN, tid = INT64_MIN;
  while (sel.next()) {
    const R& row = sel.row();
    if (row.pid != pid || row.tid != tid) {
      pid = row.pid;
      tid = row.tid;
      ends.clear();
    }
    int64_t end = row.null(R::kEnd) ? INT64_MAX : row.end;
    while (!ends.empty() && ends.back() <= row.start) ends.pop_back();
    upd.bind(1, static_cast<int64_t>(ends.size()));
    upd.bind(2, row.id);
    upd.run();
    ends.push_back(end);
  }
}

}  // namespace

void KinetoMapper::finish(const std::string& source_name) {
  store::Connection& db = out_.writer().connection();
  int64_t main = main_pid_;
  if (main == kAbsent) {
    main = 0;
    for (const auto& [pid, p] : processes_)
      if (!gpu_pids_.count(pid)) {
        main = pid;
        break;
      }
  }
  if (used_pending_pid_) {
    for (const char* t : {"kernel", "memcpy", "memset", "sync", "range", "counter"})
      db.exec("UPDATE \"" + std::string(t) + "\" SET pid=" + std::to_string(main) +
              " WHERE pid=" + std::to_string(kPendingPid));
    if (!processes_.count(main)) processes_[main];
  }

  // Keep every stored time non-negative: an event earlier than the first one
  // moves the origin back.
  if (have_origin_ && min_rel_ < 0) {
    int64_t shift = -min_rel_;
    for (const auto& tc : kTimeColumns) {
      std::string set;
      for (const char* c : tc.columns) {
        if (!c) continue;
        if (!set.empty()) set += ", ";
        set += "\"" + std::string(c) + "\"=\"" + c + "\"+" + std::to_string(shift);
      }
      db.exec("UPDATE \"" + std::string(tc.table) + "\" SET " + set);
    }
    origin_ns_ -= shift;
    for (auto& [pid, p] : processes_) {
      if (p.start != INT64_MAX) p.start += shift;
      if (p.end != INT64_MIN) p.end += shift;
    }
  }
  if (unsorted_ops_ || unsorted_ranges_) {
    // A whole table sorted and updated out of its row order: SQLite's sorter
    // keeps as much in memory as the page cache may hold and the updates
    // revisit pages, so this pass gets the 64 MiB the importer had before it
    // kept its cache small for flat memory (1 GB trace with unsorted ops: ~10 %
    // less CPU than with 4 MiB; bench/results/2026-12-07-import-linear.md).
    const int64_t cache = db.query_int("PRAGMA cache_size").value_or(-2000);
    db.exec("PRAGMA cache_size=-65536");
    if (unsorted_ops_) recompute_depth<store::rec::Op>(db, "");
    if (unsorted_ranges_)
      recompute_depth<store::rec::Range>(db, "WHERE kind=" + std::to_string(schema::range_kind::push_pop));
    db.exec("PRAGMA cache_size=" + std::to_string(cache));
  }

  // One row per CUDA graph launch, derived from its kernels as `record` does.
  db.exec(
      "INSERT INTO graph_launch(pid, device, context, stream, graph_id, correlation, start, \"end\") "
      "SELECT pid, device, context, stream, graph_id, correlation, min(start), max(\"end\") FROM kernel "
      "WHERE graph_id IS NOT NULL GROUP BY pid, correlation, graph_id");

  int64_t origin_utc = kAbsent;
  if (base_time_ns_ != kAbsent) origin_utc = base_time_ns_ + origin_ns_;
  else if (origin_ns_ > int64_t{1'000'000'000} * 1'000'000'000) origin_utc = origin_ns_;  // absolute epoch µs (old Kineto)

  for (const auto& [pid, p] : processes_) {
    bool has_events = p.start != INT64_MAX;
    if (gpu_pids_.count(pid) && !has_events) continue;
    store::ProcessRow r;
    r.pid = pid;
    r.exe = p.name;
    r.start = has_events ? p.start : 0;
    r.end = has_events ? p.end : 0;
    r.start_utc_ns = origin_utc == kAbsent ? 0 : origin_utc + r.start;
    r.rank = dist_.rank;
    r.world_size = dist_.world_size;
    r.cupti_status = "imported from a torch.profiler trace";
    out_.put(r);
  }
  for (const auto& [key, name] : thread_names_) {
    if (gpu_pids_.count(key.first)) continue;
    out_.put(store::ThreadRow{key.first, key.second, name});
  }

  store::Writer& w = out_.writer();
  w.put_stat(0, "import_events", counts_.events);
  for (const auto& [cat, n] : counts_.unknown) w.put_stat(0, "import_unknown_category:" + cat, n);
  for (const auto& [what, n] : counts_.skipped) w.put_stat(0, "import_skipped:" + what, n);
  for (const auto& [why, n] : counts_.dropped) w.put_stat(0, "import_dropped:" + why, n);

  w.set_meta(meta_key::kOriginNs, std::to_string(have_origin_ ? origin_ns_ : 0));
  if (origin_utc != kAbsent) w.set_meta(meta_key::kOriginUtcNs, std::to_string(origin_utc));
  w.set_meta(meta_key::kSource, "torch.profiler import");
  w.set_meta(meta_key::kImportedFrom, source_name);
  if (!dist_.backend.empty()) w.set_meta(meta_key::kDistributedBackend, dist_.backend);
  for (const auto& [k, v] : top_level_) {
    if (k == "schemaVersion") w.set_meta(meta_key::kTraceSchemaVersion, v);
    else if (k == "displayTimeUnit") w.set_meta(meta_key::kTraceDisplayTimeUnit, v);
    else if (k == "hostName") w.set_meta(meta_key::kHost, v);
  }
}

}  // namespace gpuscope::formats
