#include "trace_formats/store/stretches.h"

#include <algorithm>
#include <string>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/place_ops.h"

namespace gpuscope::store {
namespace {

std::optional<int64_t> query_pid(Connection& db, const std::string& sql, int64_t pid) {
  Statement st = db.prepare(sql);
  for (int i = 1; i <= st.parameter_count(); ++i) st.bind(i, pid);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.int64(0);
}

const std::string kWindow = std::to_string(schema::range_source::sampling_window);

}  // namespace

std::optional<std::pair<int64_t, int64_t>> open_traced_stretch(Connection& db, int64_t pid) {
  const auto closed = query_pid(db, "SELECT max(\"end\") FROM range WHERE pid = ? AND source = " + kWindow, pid);
  if (!closed) return std::nullopt;
  // Ops are recorded only while traced (every op begins inside a stretch) and
  // so are API calls (CUPTI's activities are off in between); ops placed by
  // position after the job do not count.
  const std::string after = std::to_string(*closed);
  const auto op = query_pid(db,
                            "SELECT min(start) FROM op WHERE pid = ? AND start > " + after +
                                " AND (external_id IS NULL OR external_id < " + std::to_string(kPlacedOpIdBase) + ")",
                            pid);
  const auto api = query_pid(db, "SELECT min(start) FROM api_call WHERE pid = ? AND start > " + after, pid);
  if (!op && !api) return std::nullopt;
  const int64_t first = std::min(op.value_or(INT64_MAX), api.value_or(INT64_MAX));
  // Tracing switches at step boundaries: the step holding the first sign of it was traced whole.
  const int64_t start = std::max(
      *closed, query_pid(db, "SELECT max(start) FROM step WHERE pid = ? AND start <= " + std::to_string(first), pid)
                   .value_or(first));
  int64_t end = first;
  for (const char* t : {"op", "api_call", "range", "step", "kernel", "memcpy", "memset", "sync"})
    end = std::max(end, query_pid(db, "SELECT max(\"end\") FROM \"" + std::string(t) + "\" WHERE pid = ?", pid)
                            .value_or(end));
  return std::make_pair(start, end);
}

TracedStretches traced_stretches(Connection& db) {
  TracedStretches out;
  Statement st = db.prepare("SELECT pid, start, \"end\" FROM range WHERE source = " + kWindow + " AND \"end\" IS NOT NULL");
  std::vector<int64_t> pids;
  while (st.step()) {
    out.stretches.emplace_back(st.int64(1), st.int64(2));
    pids.push_back(st.int64(0));
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (int64_t pid : pids)
    if (const auto open = open_traced_stretch(db, pid)) {
      out.stretches.push_back(*open);
      ++out.closed_by_reader;
    }
  std::sort(out.stretches.begin(), out.stretches.end());
  return out;
}

}  // namespace gpuscope::store
