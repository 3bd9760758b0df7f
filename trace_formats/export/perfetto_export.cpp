// The Perfetto export's entry: what the pass needs before it starts (the
// stream waits, the GPU work each event sync waited for), the pass
// (perfetto_events.cpp) and the output file.
#include <chrono>

#include "trace_formats/export/exporters.h"
#include "trace_formats/export/perfetto_writer.h"

namespace gpuscope::formats {

void PerfettoWriter::load_event_syncs() {
  event_syncs_.load(m_.reader().db(), m_.and_pid());
  if (event_syncs_.empty()) return;
  const std::string linked = " WHERE pid IS NOT NULL AND correlation IS NOT NULL" + m_.and_pid();
  auto q = m_.reader().query("SELECT pid, stream, correlation, start FROM kernel" + linked +
                             " UNION ALL SELECT pid, stream, correlation, start FROM memcpy" + linked +
                             " UNION ALL SELECT pid, stream, correlation, start FROM memset" + linked);
  const int pid = q.column("pid"), stream = q.column("stream"), corr = q.column("correlation"), start = q.column("start");
  while (q.step()) event_syncs_.note_work(q.int64(pid), q.int64(stream), q.int64(corr), 0, q.int64(start));
  event_syncs_.finish();
}

void PerfettoWriter::write_all(uint64_t rows_in_memory) {
  waits_.load(m_.reader().db(), m_.and_pid());
  load_event_syncs();
  if (!write_sorted_in_memory(rows_in_memory)) write_sorted_by_sqlite();
  close_until(INT64_MAX);
  out_.flush();
}

ExportStats export_perfetto(store::Reader& db, const std::string& path, const ExportOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<GpuscopeMark> marks = gpuscope_marks(db, opt);
  WindowedTables windowed(db, opt);
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
  w.set_marks(marks);
  w.set_steps(replaced_steps(db, opt));
  w.write_all(opt.perfetto_rows_in_memory);
  progress.done();
  ExportStats s;
  s.commit(out, w.events());
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace gpuscope::formats
