#include "trace_formats/store/summary.h"

#include <algorithm>
#include <climits>

#include "trace_formats/schema/enums.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/stretches.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::store {

int64_t dropped_records(Connection& db) {
  return db.query_int("SELECT coalesce(sum(value),0) FROM collector_stat WHERE key LIKE 'dropped%'").value_or(0);
}

RecordingSummary summarize(Reader& r) {
  RecordingSummary s;
  s.schema_version = r.schema_version();
  s.gpuscope_version = r.meta(meta_key::kGpuscopeVersion, "?");
  s.source = r.meta(meta_key::kSource, "gpuscope record");

  s.job = read_job_end(r);

  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "range", "op", "sync"}) {
    auto st = r.query("SELECT min(start), max(\"end\") FROM \"" + std::string(t) + "\"");
    if (st.step() && !st.is_null(0)) {
      lo = std::min(lo, st.int64(0));
      hi = std::max(hi, st.int64(1));
    }
  }
  if (lo <= hi) s.span = RecordingSummary::Span{lo, hi};

  // A stretch the job left open (killed inside it) counts up to the last event (store/stretches.h).
  const TracedStretches stretches = traced_stretches(r.db());
  if (!stretches.stretches.empty()) {
    int64_t ns = 0;
    for (const auto& [start, end] : stretches.stretches) ns += end - start;
    // Between stretches CUPTI is torn down where it safely can be (docs/internals.md, "Collector").
    auto teardowns = r.query(
        "SELECT coalesce(sum(CASE key WHEN 'cupti_finalizes' THEN value END), 0), "
        "coalesce(sum(CASE key WHEN 'cupti_teardown_failures' THEN value END), 0) FROM collector_stat");
    const bool stats = teardowns.step();
    s.traced = RecordingSummary::Traced{static_cast<int64_t>(stretches.stretches.size()), ns, r.meta(meta_key::kSample, ""),
                                        stats ? teardowns.int64(0) : 0, stats ? teardowns.int64(1) : 0,
                                        stretches.closed_by_reader};
  }

  auto dev = r.query("SELECT id, name, sm_count, total_memory, compute_major, compute_minor FROM device ORDER BY id");
  while (dev.step())
    s.devices.push_back({dev.int64(0), std::string(dev.text(1)), dev.int64(2), dev.int64(3), dev.int64(4), dev.int64(5)});

  auto proc = r.query("SELECT pid, host, rank, world_size, cupti_status, cmdline FROM process ORDER BY pid");
  while (proc.step()) {
    auto nullable = [&](int col) { return proc.is_null(col) ? std::nullopt : std::optional<int64_t>(proc.int64(col)); };
    s.processes.push_back({proc.int64(0), std::string(proc.text(1)), nullable(2), nullable(3),
                           std::string(proc.text(4)), std::string(proc.text(5))});
  }

  for (const auto& t : schema::tables()) {
    if (t.name == "meta" || t.name == "enum") continue;
    s.rows.push_back({std::string(t.name), r.count(t.name)});
  }
  s.dropped = dropped_records(r.db());
  auto msg = r.query("SELECT pid, text FROM message ORDER BY ts");
  while (msg.step()) s.messages.push_back({msg.int64(0), std::string(msg.text(1))});
  return s;
}

}  // namespace gpuscope::store
