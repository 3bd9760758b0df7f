#include "cli/record_support.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <vector>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/settings.h"
#include "export/progress.h"
#include "store/sqlite.h"

namespace gpuscope::cli {

void validate_trace_list(const std::string& list) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item != "cuda" && item != "nvtx" && item != "memory" && item != "torch" && item != "nvml")
      throw Error("record: unknown --trace source '" + item + "' (known: cuda,nvtx,memory,torch,nvml)");
  }
}

int claim_output(const std::string& path, bool force) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    AtomicFile fresh(path);
    flock(fresh.fd(), LOCK_EX | LOCK_NB);  // nobody else can see it yet
    if (link(fresh.temp_path().c_str(), path.c_str()) == 0) {
      const int fd = fcntl(fresh.fd(), F_DUPFD_CLOEXEC, 0);
      if (fd < 0) {
        unlink(path.c_str());
        throw Error(path + ": cannot create: " + std::strerror(errno));
      }
      // Stale journals of an earlier file of this name would be read as ours.
      for (const char* suffix : {"-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
      return fd;  // `fresh` removes the temporary name; the file stays under `path`
    }
    if (errno == EPERM || errno == EOPNOTSUPP) {
      // No hard links on this file system: create the name itself, then lock it.
      const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        flock(fd, LOCK_EX | LOCK_NB);
        for (const char* suffix : {"-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
        return fd;
      }
    }
    if (errno != EEXIST) throw Error(path + ": cannot create: " + std::strerror(errno));
    if (!force) throw Error(path + ": already exists (use --force to overwrite)");
    const int old = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (old < 0 && errno == ENOENT) continue;  // gone meanwhile: claim again
    if (old >= 0) {
      if (flock(old, LOCK_EX | LOCK_NB) != 0) {
        close(old);
        throw Error(path + ": being recorded by another gpuscope record");
      }
      struct stat held {}, named {};
      const bool same = fstat(old, &held) == 0 && lstat(path.c_str(), &named) == 0 &&
                        held.st_dev == named.st_dev && held.st_ino == named.st_ino;
      if (same && S_ISDIR(named.st_mode)) {
        close(old);
        throw Error(path + ": is a directory");
      }
      if (same) unlink(path.c_str());
      close(old);
    } else if (errno == ELOOP) {
      unlink(path.c_str());  // a symlink: replaced, never followed
    } else {
      throw Error(path + ": cannot replace: " + std::strerror(errno));
    }
  }
  throw Error(path + ": taken by another gpuscope record meanwhile");
}

std::string find_collector() {
  if (const char* env = settings::raw(settings::Id::kCollector)) {
    if (!std::filesystem::exists(env))
      throw Error(std::string(env) + ": " + settings::name(settings::Id::kCollector) + " does not exist");
    return std::filesystem::absolute(env).string();
  }
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& dir : {self, self / "../lib", self / "../lib/gpuscope"}) {
    auto p = dir / "libgpuscope_collector.so";
    if (std::filesystem::exists(p)) return std::filesystem::canonical(p).string();
  }
  throw Error("record: libgpuscope_collector.so not found next to " + self.string() +
              " or in ../lib (set GPUSCOPE_COLLECTOR)");
}

// CUPTI's synchronization records carry no thread; the API call that waited
// (same pid and correlation) does. One scan of api_call, through small
// temporary tables, so a long recording is not searched once per wait.
static void fill_sync_threads(store::Connection& db) {
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
static void link_ops_to_calls(store::Connection& db) {
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
  std::pair<int64_t, int64_t> thread{store::kNull, store::kNull};
  const auto total = static_cast<uint64_t>(db.query_int("SELECT count(*) FROM api_call").value_or(0));
  formats::Progress progress("gpuscope: linking ops to API calls", true);
  uint64_t done = 0;
  bool more_ops = ops.step();
  while (calls.step()) {
    if ((++done & 0xffff) == 0) progress.update(done, total, "calls", done);
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

// Correlation 0 links nothing, here and in the analyzer. Ids that cannot be right: no two API calls share one, and outside
// a CUDA graph one launch runs one kernel. CUPTI once gave a whole stretch one
// id after a teardown (H200); the collector stores 0 from where it sees that,
// and this clears what it stored before seeing it. Returns the rows cleared.
int64_t drop_impossible_links(store::Connection& db) {
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

void finalize_recording(const std::string& path) {
  try {
    store::Connection db(path, store::Connection::Mode::kReadWrite);
    db.exec("BEGIN IMMEDIATE");
    if (int64_t cleared = drop_impossible_links(db))
      std::fprintf(stderr, "gpuscope: %s: %lld rows shared a CUDA correlation id with others and were unlinked\n",
                   path.c_str(), static_cast<long long>(cleared));
    // One row per graph launch, from the kernels it ran.
    db.exec(
        "INSERT INTO graph_launch(pid, device, context, stream, graph_id, correlation, start, \"end\") "
        "SELECT pid, device, context, stream, graph_id, correlation, min(start), max(\"end\") FROM kernel "
        "WHERE graph_id IS NOT NULL AND correlation != 0 GROUP BY pid, correlation, graph_id "
        "HAVING NOT EXISTS (SELECT 1 FROM graph_launch g WHERE g.pid = kernel.pid)");
    fill_sync_threads(db);
    link_ops_to_calls(db);
    db.exec("COMMIT");
    // A single self-contained file is what users copy around.
    try {
      db.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
    } catch (const Error&) {
      // A process of the job still holds the file open; it stays in WAL mode.
    }
    auto count = [&](const char* t) {
      return db.query_int(std::string("SELECT count(*) FROM \"") + t + "\"").value_or(0);
    };
    long long procs = count("process");
    long long dropped =
        db.query_int("SELECT coalesce(sum(value),0) FROM collector_stat WHERE key LIKE 'dropped%'").value_or(0);
    if (procs == 0) {
      std::fprintf(stderr, "gpuscope: %s: the job recorded nothing (no CUDA, NVTX or torch activity seen)\n",
                   path.c_str());
      return;
    }
    std::fprintf(stderr,
                 "gpuscope: wrote %s: %lld process(es), %lld kernels, %lld memcpys, %lld API calls, "
                 "%lld ranges, %lld ops, %lld dropped records\n",
                 path.c_str(), procs, (long long)count("kernel"), (long long)count("memcpy"),
                 (long long)count("api_call"), (long long)count("range"), (long long)count("op"), dropped);
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuscope: warning: could not finalize %s: %s\n", path.c_str(), e.what());
  }
}

}  // namespace gpuscope::cli
