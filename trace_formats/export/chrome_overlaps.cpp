// Host events that would not nest on their thread: an op that starts inside a
// DataLoader wait and outlasts it, NVTX start/end ranges, an API call whose
// timestamps come from another clock than its op's. TensorBoard's tree
// builder drops each such event ("ranges on the same thread should not
// intersect"), so the Chrome export moves it, and what nests in it, to an
// "overlapping" row of its thread, where its recorded times stay as they are.
#include "trace_formats/export/chrome_writer.h"

#include <algorithm>

#include "trace_formats/import/kineto_names.h"

namespace gpuscope::formats {

namespace {

namespace range_kind = schema::range_kind;

struct HostRow {
  int64_t start, end, id;
  int table;
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
      "SELECT pid, tid, s, e, t, id FROM ("
      "SELECT pid, tid, start AS s, max(\"end\", start) AS e, 0 AS t, id FROM op" + m_.where_pid() +
      " UNION ALL SELECT pid, tid, start, max(\"end\", start), 1, id FROM api_call" + m_.where_pid() +
      " UNION ALL SELECT r.pid, r.tid, r.start, max(coalesce(r.\"end\", r.start), r.start), 2, r.id FROM range r" +
      range_where + ") ORDER BY pid, tid, s, e DESC, t, id");
  std::vector<HostRow> rows, moved;
  auto settle = [&](int64_t pid, int64_t tid) {
    if (auto it = step_rows_.find(pid); it != step_rows_.end() && it->second.first == tid) {
      for (const auto& [start, end] : it->second.second)
        rows.push_back({start, end, static_cast<int64_t>(rows.size()), kStepRows});
      std::sort(rows.begin(), rows.end(), row_order);
    }
    // Level by level: what does not nest on one row moves to the next.
    for (int64_t level = 0; !rows.empty(); ++level) {
      std::vector<HostRow> stack;  // open rows
      moved.clear();
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
          if (level > 0) moved_[r.table][r.id] = level;
        } else {
          moved.push_back(r);
        }
      }
      std::sort(moved.begin(), moved.end(), row_order);
      if (!moved.empty()) overlap_thread(pid, tid, level + 1);
      rows.swap(moved);
    }
  };
  const int pid_col = q.column("pid"), tid_col = q.column("tid"), start_col = q.column("s"), end_col = q.column("e");
  const int table_col = q.column("t"), id_col = q.column("id");
  int64_t pid = 0, tid = 0;
  bool any = false;
  while (q.step()) {
    int64_t p = q.int64(pid_col), t = q.int64(tid_col);
    if (any && (p != pid || t != tid)) settle(pid, tid);
    any = true;
    pid = p;
    tid = t;
    rows.push_back({q.int64(start_col), q.int64(end_col), q.int64(id_col), static_cast<int>(q.int64(table_col))});
  }
  if (any) settle(pid, tid);
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
