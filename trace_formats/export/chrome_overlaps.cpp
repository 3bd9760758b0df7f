// Host events that would not nest on their thread: an op that starts inside a
// DataLoader wait and outlasts it, NVTX start/end ranges, an API call whose
// timestamps come from another clock than its op's. TensorBoard's tree
// builder drops each such event ("ranges on the same thread should not
// intersect"), so the Chrome export moves it, and what nests in it, to an
// "overlapping" row of its thread, where its recorded times stay as they are.
#include "trace_formats/export/chrome_writer.h"

#include <algorithm>
#include <set>

#include "trace_formats/export/hta_fit.h"
#include "trace_formats/import/kineto_names.h"

namespace gpuscope::formats {

namespace {

namespace range_kind = schema::range_kind;

struct HostRow {
  int64_t start, end, id;
  int table;
  bool fixed = false;  // a step's bounds: HtaFit moves nothing across them
};

// As TensorBoard visits them: by start, longer first.
bool row_order(const HostRow& a, const HostRow& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.table != b.table ? a.table < b.table : a.id < b.id;
}

}  // namespace

void ChromeWriter::plan_overlaps() {
  finish_step_rows();
  // One sorted pass over every host row, thread by thread: SQLite sorts, so
  // memory holds one thread's open stack and the rows that move.
  const std::string range_where =
      " WHERE r.kind != " + std::to_string(range_kind::mark) + " AND r.source NOT IN (" +
      std::to_string(schema::range_source::sampling_window) + ", " +
      std::to_string(schema::range_source::untraced_drained) +
      ") AND coalesce(r.domain_id, -1) NOT IN (SELECT id FROM string WHERE value='" +
      std::string(kGpuAnnotationDomain) + "')" + m_.and_pid("r.");
  auto q = m_.reader().query(
      "SELECT pid, tid, s, e, t, id, f FROM ("
      "SELECT pid, tid, start AS s, max(\"end\", start) AS e, 0 AS t, id, 0 AS f FROM op" + m_.where_pid() +
      " UNION ALL SELECT pid, tid, start, max(\"end\", start), 1, id, 0 FROM api_call" + m_.where_pid() +
      " UNION ALL SELECT r.pid, r.tid, r.start, max(coalesce(r.\"end\", r.start), r.start), 2, r.id, r.source = " +
      std::to_string(schema::range_source::profiler_step) + " FROM range r" + range_where +
      ") ORDER BY pid, tid, s, e DESC, t, id");
  std::vector<HostRow> rows, moved, kept;
  std::set<int64_t> steps_settled;  // processes whose step rows were planned
  auto settle = [&](int64_t pid, int64_t tid) {
    // Steps are fixed on their row and soft fixed points on the process's
    // others (hta_fit.h), but for one lying inside a microsecond, which
    // HtaFit moves as any other event.
    std::vector<int64_t> step_bounds;
    if (auto it = step_rows_.find(pid); it != step_rows_.end()) {
      const auto& bounds = it->second.second;
      int64_t base = 0;  // step rows are numbered across processes, in step_rows_'s order
      for (auto p = step_rows_.begin(); p != it; ++p) base += static_cast<int64_t>(p->second.second.size());
      for (size_t i = 0; i < bounds.size(); ++i) {
        const auto [start, end] = bounds[i];
        if (!hta_negative(start, end)) {
          step_bounds.push_back(start);
          step_bounds.push_back(end);
        }
        if (it->second.first == tid) rows.push_back({start, end, base + static_cast<int64_t>(i), kStepRows, true});
      }
      if (it->second.first == tid) steps_settled.insert(pid);
      std::sort(rows.begin(), rows.end(), row_order);
    }
    // Level by level: what does not nest on one row moves to the next.
    for (int64_t level = 0; !rows.empty(); ++level) {
      std::vector<HostRow> stack;  // open rows
      moved.clear();
      kept.clear();
      for (const HostRow& r : rows) {
        while (!stack.empty() && r.start >= stack.back().end) stack.pop_back();
        // A step stays where the step table has it (analyze's bounds): what it
        // cuts moves instead.
        while (r.table == kStepRows && !stack.empty() && r.end > stack.back().end && level < kOverlapLevels) {
          moved.push_back(stack.back());
          stack.pop_back();
        }
        if (stack.empty() || r.end <= stack.back().end || level == kOverlapLevels || r.table == kStepRows) {
          stack.push_back(r);
          kept.push_back(r);
          if (level > 0) moved_[r.table][r.id] = level;
        } else {
          moved.push_back(r);
        }
      }
      fit_for_hta(kept, step_bounds);
      std::sort(moved.begin(), moved.end(), row_order);
      if (!moved.empty()) overlap_thread(pid, tid, level + 1);
      rows.swap(moved);
    }
  };
  const int pid_col = q.column("pid"), tid_col = q.column("tid"), start_col = q.column("s"), end_col = q.column("e");
  const int table_col = q.column("t"), id_col = q.column("id"), fixed_col = q.column("f");
  int64_t pid = 0, tid = 0;
  bool any = false;
  while (q.step()) {
    int64_t p = q.int64(pid_col), t = q.int64(tid_col);
    if (any && (p != pid || t != tid)) settle(pid, tid);
    any = true;
    pid = p;
    tid = t;
    rows.push_back({q.int64(start_col), q.int64(end_col), q.int64(id_col), static_cast<int>(q.int64(table_col)),
                    q.int64(fixed_col) != 0});
  }
  if (any) settle(pid, tid);
  // Steps on a thread without host rows of its own.
  for (const auto& [p, steps] : step_rows_)
    if (!steps_settled.count(p)) settle(p, steps.first);
}

// The events of one row (`kept`) through HtaFit (hta_fit.h): those it moves,
// with their new bounds, into fitted_.
template <class Rows>
void ChromeWriter::fit_for_hta(const Rows& kept, std::vector<int64_t> soft) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  std::vector<int64_t> fixed;
  for (const auto& r : kept) {
    if (r.fixed && !hta_negative(r.start, r.end)) {
      fixed.push_back(r.start);
      fixed.push_back(r.end);
    } else {
      spans.push_back({r.start, r.end});
    }
  }
  const HtaFit fit(spans, std::move(fixed), std::move(soft));
  hta_unfixed_ += fit.unfixed();
  if (fit.empty()) return;
  for (const auto& r : kept) {
    if (r.fixed && !hta_negative(r.start, r.end)) continue;
    const int64_t s = fit(r.start), e = fit(r.end);
    if (s != r.start || e != r.end) fitted_[r.table][r.id] = {s, e};
  }
}

void ChromeWriter::overlap_thread(int64_t pid, int64_t tid, int64_t level) {
  std::string name = "thread " + std::to_string(tid);
  for (const auto& t : m_.threads())
    if (t.pid == pid && t.tid == tid && !t.name.empty()) name = t.name;
  name += level == 1 ? " (overlapping)" : " (overlapping " + std::to_string(level) + ")";
  const int64_t row = overlap_tid(tid, level);
  begin('M', 6 * name.size() + 2);
  o_.lit(",\"name\":\"thread_name\"");
  where(pid, row, 0);
  o_.lit(",\"args\":{\"name\":");
  o_.put_json_string(name);
  o_.lit("}}");
  begin('M');
  o_.lit(",\"name\":\"thread_sort_index\"");
  where(pid, row, 0);
  o_.lit(",\"args\":{\"sort_index\":");
  o_.put_int(row);
  o_.lit("}}");
}

}  // namespace gpuscope::formats
