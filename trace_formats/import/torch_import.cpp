#include "trace_formats/import/torch_import.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "trace_formats/common/error.h"
#include "trace_formats/export/progress.h"
#include "trace_formats/import/origin_lookahead.h"
#include "trace_formats/import/row_writer.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::formats {

namespace {

// torch.profiler's last prof.step() opens a ProfilerStep#N that ends when the
// profiler stops and holds no work: it is not a training step (its range stays).
int64_t drop_empty_last_profiler_steps(store::Connection& db) {
  const int64_t before = db.query_int("SELECT count(*) FROM step").value_or(0);
  const std::string profiler_step = std::to_string(schema::step_source::profiler_step);
  // The last step of each process comes from one grouped pass: a subquery
  // correlated per step row made this quadratic (15 s for 15,000 steps).
  db.exec(
      "DELETE FROM step WHERE source = " + profiler_step +
      " AND (pid, start) IN (SELECT pid, max(start) FROM step WHERE source = " + profiler_step + " GROUP BY pid) "
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
    // Rows only append, so the pages in use are each table's right edge and
    // the string index, a few hundred KB; a page cache of 4 MiB keeps the
    // memory flat. With 64 MiB the peak grew from 37 MB (0.2 GB trace, whose
    // 22 MB database fits) to 85 MB (1 GB and up) for the same CPU time and
    // byte-identical files (bench/results/2026-12-07-import-linear.md).
    writer.connection().exec(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE; "
        "PRAGMA cache_size=-4096; PRAGMA temp_store=FILE;");
    RowWriter rows(writer);
    KinetoMapper mapper(rows);
    Progress progress("importing " + src.name(), options.progress);
    writer.begin();
    OriginLookahead lookahead(mapper, options.lookahead_events);
    result.read = read_chrome_trace(src, lookahead, [&](const ReadProgress& p) {
      progress.update(p.raw_bytes, p.raw_total, "B", p.events);
    }, options.window);
    lookahead.release();
    progress.stage("read, finishing (processes, threads, nesting)");
    if (mapper.recognized() == 0)
      throw Error(src.name() + ": not a torch.profiler trace: " +
                  (result.read.elements == 0 ? "no trace events"
                                             : "JSON of another shape (no element is a trace event)"));
    mapper.finish(std::filesystem::path(src.name()).filename().string());
    for (const auto& [k, v] : options.meta) writer.set_meta(k, v);
    progress.stage("read, finishing (empty last steps)");
    const int64_t empty_last_steps = drop_empty_last_profiler_steps(rows.writer().connection());
    progress.stage("read, writing the database");
    rows.writer().commit();
    progress.done();
    result.counts = mapper.counts();
    result.counts.steps -= empty_last_steps;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

ImportResult import_torch_trace(const std::string& trace_path, const std::string& db_path,
                                const ImportOptions& options) {
  return import_with(torch_profiler_importer(), trace_path, db_path, options);
}

namespace {

bool sniff_chrome_trace_json(std::string_view head) {
  if (head.starts_with("\xef\xbb\xbf")) head.remove_prefix(3);  // UTF-8 byte order mark
  const size_t i = head.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (head[i] == '{' || head[i] == '[');
}

}  // namespace

const Importer& torch_profiler_importer() {
  static const Importer importer{"torch.profiler",
                                 "torch.profiler / Kineto Chrome trace JSON, plain or gzip (*.pt.trace.json[.gz])",
                                 sniff_chrome_trace_json, import_into};
  return importer;
}

}  // namespace gpuscope::formats
