#include "import/torch_import.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/terminal_text.h"
#include "export/progress.h"
#include "import/origin_lookahead.h"
#include "import/row_writer.h"
#include "store/writer.h"

namespace gpuscope::formats {

namespace {

// torch.profiler's last prof.step() opens a ProfilerStep#N that ends when the
// profiler stops and holds no work: it is not a training step (its range stays).
int64_t drop_empty_last_profiler_steps(store::Connection& db) {
  const int64_t before = db.query_int("SELECT count(*) FROM step").value_or(0);
  db.exec(
      "DELETE FROM step WHERE source = 1 "
      "AND start = (SELECT max(t.start) FROM step t WHERE t.pid = step.pid AND t.source = 1) "
      "AND NOT EXISTS (SELECT 1 FROM op o WHERE o.pid = step.pid AND o.start >= step.start AND o.start < step.\"end\" "
      "AND o.name_id NOT IN (SELECT id FROM string WHERE value LIKE 'ProfilerStep#%')) "
      "AND NOT EXISTS (SELECT 1 FROM api_call a WHERE a.pid = step.pid AND a.start >= step.start "
      "AND a.start < step.\"end\")");
  return before - db.query_int("SELECT count(*) FROM step").value_or(0);
}

}  // namespace

ImportResult import_into(ByteSource& src, const std::string& db_path, const ImportOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  ImportResult result;
  {
    store::Writer writer(db_path);
    // A fresh private file renamed into place at the end: no journal, no
    // fsync and an exclusive lock are safe and several times faster.
    writer.connection().exec(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
        "PRAGMA cache_size=-65536; PRAGMA temp_store=FILE;");
    RowWriter rows(writer);
    KinetoMapper mapper(rows);
    Progress progress("importing " + src.name(), options.progress);
    writer.begin();
    OriginLookahead lookahead(mapper, options.lookahead_events);
    result.read = read_chrome_trace(src, lookahead, [&](const ReadProgress& p) {
      progress.update(p.raw_bytes, p.raw_total, "B", p.events);
    }, options.window);
    lookahead.release();
    progress.done();
    if (mapper.recognized() == 0)
      throw Error(src.name() + ": not a torch.profiler trace: " +
                  (result.read.elements == 0 ? "no trace events"
                                             : "JSON of another shape (no element is a trace event)"));
    mapper.finish(std::filesystem::path(src.name()).filename().string());
    for (const auto& [k, v] : options.meta) writer.set_meta(k, v);
    const int64_t empty_last_steps = drop_empty_last_profiler_steps(rows.writer().connection());
    rows.writer().commit();
    result.counts = mapper.counts();
    result.counts.steps -= empty_last_steps;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

ImportResult import_torch_trace(const std::string& trace_path, const std::string& db_path,
                                const ImportOptions& options) {
  check_outputs({db_path}, {trace_path}, options.force);
  auto src = ByteSource::open_file(trace_path);
  // A fresh private file renamed into place at the end; Ctrl-C leaves nothing.
  AtomicFile out(db_path, AtomicFile::Kind::kSqlite);
  out.close();
  ImportResult r = import_into(*src, out.temp_path(), options);
  std::error_code ec;
  for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(db_path + suffix, ec);
  out.commit();
  return r;
}

std::string import_summary(const ImportResult& r) {
  const ImportCounts& c = r.counts;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%lld events in %.2f s (%.0f MB/s): %lld kernels, %lld memcpys, %lld memsets, %lld API calls, "
                "%lld ops, %lld ranges, %lld steps, %lld memory events, %lld counters, %lld syncs",
                (long long)c.events, r.seconds, r.seconds > 0 ? double(r.read.bytes) / 1e6 / r.seconds : 0.0,
                (long long)c.kernels, (long long)c.memcpys, (long long)c.memsets, (long long)c.api_calls,
                (long long)c.ops, (long long)c.ranges, (long long)c.steps, (long long)c.memory_events,
                (long long)c.counters, (long long)c.syncs);
  std::string s = buf;
  if (!c.unknown.empty()) {
    s += "; unknown categories, not imported:";
    for (const auto& [cat, n] : c.unknown)
      s += " " + (cat.empty() ? std::string("\"\"") : terminal_safe(cat)) + " " + std::to_string(n);
  }
  return s;
}

}  // namespace gpuscope::formats
