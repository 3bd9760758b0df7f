#include "trace_formats/store/finalize.h"

#include <tuple>
#include <utility>
#include <vector>

#include "trace_formats/common/error.h"
#include "trace_formats/store/place_ops.h"
#include "trace_formats/store/summary.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::store {
namespace {

// CUPTI's synchronization records carry no thread; the API call that waited
// (same pid and correlation) does. One scan of api_call, through small
// temporary tables, so a long recording is not searched once per wait.
void fill_sync_threads(Connection& db) {
  db.exec("CREATE TEMP TABLE waits AS SELECT DISTINCT pid, correlation FROM sync WHERE tid IS NULL AND correlation != 0");
  db.exec("CREATE TEMP TABLE wait_tid AS SELECT a.pid, a.correlation, a.tid FROM api_call a "
          "JOIN waits w ON w.pid = a.pid AND w.correlation = a.correlation");
  db.exec("CREATE INDEX temp.wait_tid_key ON wait_tid(pid, correlation)");
  db.exec("UPDATE sync SET tid = (SELECT t.tid FROM wait_tid t WHERE t.pid = sync.pid AND t.correlation = sync.correlation) "
          "WHERE tid IS NULL");
  db.exec("DROP TABLE temp.waits; DROP TABLE temp.wait_tid;");
}

// Ops are linked to the API calls they made (and so to their GPU work) here,
// after the job, by thread and time: a call belongs to the innermost op open
// on its thread when it started. This is the link CUPTI's external correlation
// gives (the same on every recording in tests/data), without a push and a pop
// around every op on the job's threads (`record` sets
// GPUSCOPE_TORCH_EXTERNAL_IDS=0). Links CUPTI made stay. One merge of ops and
// calls, both in (pid, tid, start) order, with a stack of the open ops.
void link_ops_to_calls(Connection& db, const LinkProgress& progress) {
  if (!db.query_int("SELECT 1 FROM op WHERE external_id IS NOT NULL LIMIT 1")) return;
  auto ops = db.prepare("SELECT pid, tid, start, \"end\", external_id FROM op WHERE external_id IS NOT NULL "
                        "ORDER BY pid, tid, start, depth");
  auto calls = db.prepare("SELECT pid, tid, start, correlation FROM api_call WHERE correlation IS NOT NULL AND correlation != 0 "
                          "ORDER BY pid, tid, start");
  auto link = db.prepare("INSERT OR IGNORE INTO external_correlation(pid, correlation, external_id) VALUES (?, ?, ?)");
  struct Open {
    int64_t end, external_id;
  };
  using Key = std::tuple<int64_t, int64_t, int64_t>;  // pid, tid, start
  std::vector<Open> open;
  std::pair<int64_t, int64_t> thread{kNull, kNull};
  const auto total = static_cast<uint64_t>(db.query_int("SELECT count(*) FROM api_call").value_or(0));
  uint64_t done = 0;
  bool more_ops = ops.step();
  while (calls.step()) {
    if ((++done & 0xffff) == 0 && progress) progress(done, total);
    const Key call{calls.int64(0), calls.int64(1), calls.int64(2)};
    // Ops of this thread that started by the call; earlier threads' are skipped.
    while (more_ops && Key{ops.int64(0), ops.int64(1), ops.int64(2)} <= call) {
      std::pair<int64_t, int64_t> op_thread{ops.int64(0), ops.int64(1)};
      if (op_thread != thread) {
        open.clear();
        thread = op_thread;
      }
      const int64_t start = ops.int64(2);
      while (!open.empty() && open.back().end < start) open.pop_back();
      open.push_back({ops.int64(3), ops.int64(4)});
      more_ops = ops.step();
    }
    if (thread != std::pair{std::get<0>(call), std::get<1>(call)}) continue;
    while (!open.empty() && open.back().end < std::get<2>(call)) open.pop_back();
    if (open.empty()) continue;
    link.bind(1, std::get<0>(call));
    link.bind(2, calls.int64(3));
    link.bind(3, open.back().external_id);
    link.run();
  }
}

}  // namespace

// Ids that cannot be right: no two API calls share one, and outside a CUDA
// graph one launch runs one kernel. CUPTI once gave a whole stretch one id
// after a teardown (H200); the collector stores 0 from where it sees that, and
// this clears what it stored before seeing it.
int64_t drop_impossible_links(Connection& db) {
  db.exec(
      "CREATE TEMP TABLE impossible_corr AS "
      "SELECT pid, correlation FROM api_call WHERE correlation != 0 GROUP BY pid, correlation HAVING count(*) > 1 "
      "UNION SELECT pid, correlation FROM kernel WHERE correlation != 0 AND graph_id IS NULL "
      "GROUP BY pid, correlation HAVING count(*) > 1");
  int64_t cleared = 0;
  for (const char* table : {"api_call", "kernel", "memcpy", "memset", "sync"}) {
    db.exec(std::string("UPDATE \"") + table +
            "\" SET correlation = 0 WHERE (pid, correlation) IN (SELECT pid, correlation FROM impossible_corr)");
    cleared += sqlite3_changes(db.raw());
  }
  db.exec("DROP TABLE impossible_corr");
  return cleared;
}

Finalized finalize_recording(const std::string& path, const LinkProgress& progress) {
  Finalized out;
  Connection db(path, Connection::Mode::kReadWrite);
  db.exec("BEGIN IMMEDIATE");
  out.unlinked = drop_impossible_links(db);
  // One row per graph launch, from the kernels it ran.
  db.exec(
      "INSERT INTO graph_launch(pid, device, context, stream, graph_id, correlation, start, \"end\") "
      "SELECT pid, device, context, stream, graph_id, correlation, min(start), max(\"end\") FROM kernel "
      "WHERE graph_id IS NOT NULL AND correlation != 0 GROUP BY pid, correlation, graph_id "
      "HAVING NOT EXISTS (SELECT 1 FROM graph_launch g WHERE g.pid = kernel.pid)");
  fill_sync_threads(db);
  // Placing and linking each scan the API calls once: one progress from 0 to 100 %.
  const uint64_t passes = ops_in_some_steps(db) ? 2 : 1;
  auto pass = [&](uint64_t n) -> LinkProgress {
    if (!progress) return {};
    return [&progress, n, passes](uint64_t done, uint64_t total) { progress(n * total + done, passes * total); };
  };
  out.placed = place_ops_by_position(db, pass(0));
  link_ops_to_calls(db, pass(passes - 1));
  db.exec("COMMIT");
  // A single self-contained file is what users copy around.
  try {
    db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
  } catch (const Error&) {
    // A process of the job still holds the file open; it stays in WAL mode.
  }
  auto count = [&](const char* table) {
    return db.query_int(std::string("SELECT count(*) FROM \"") + table + "\"").value_or(0);
  };
  out.processes = count("process");
  out.kernels = count("kernel");
  out.memcpys = count("memcpy");
  out.api_calls = count("api_call");
  out.ranges = count("range");
  out.ops = count("op");
  out.dropped = dropped_records(db);
  out.stopped = meta_value(db, meta_key::kRecordingStopped).value_or("");
  return out;
}

}  // namespace gpuscope::store
