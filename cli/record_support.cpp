#include "cli/record_support.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "common/error.h"
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

std::string find_executable(const std::string& name) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : std::string();
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(candidate)) return candidate;
  }
  return {};
}

std::string find_collector() {
  if (const char* env = std::getenv("GPUSCOPE_COLLECTOR")) {
    if (!std::filesystem::exists(env)) throw Error(std::string(env) + ": GPUSCOPE_COLLECTOR does not exist");
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
  db.exec("CREATE TEMP TABLE waits AS SELECT DISTINCT pid, correlation FROM sync WHERE tid IS NULL");
  db.exec("CREATE TEMP TABLE wait_tid AS SELECT a.pid, a.correlation, a.tid FROM api_call a "
          "JOIN waits w ON w.pid = a.pid AND w.correlation = a.correlation");
  db.exec("CREATE INDEX temp.wait_tid_key ON wait_tid(pid, correlation)");
  db.exec("UPDATE sync SET tid = (SELECT t.tid FROM wait_tid t WHERE t.pid = sync.pid AND t.correlation = sync.correlation) "
          "WHERE tid IS NULL");
  db.exec("DROP TABLE temp.waits; DROP TABLE temp.wait_tid;");
}

void finalize_recording(const std::string& path) {
  try {
    store::Connection db(path, store::Connection::Mode::kReadWrite);
    db.exec("BEGIN IMMEDIATE");
    // One row per graph launch, from the kernels it ran.
    db.exec(
        "INSERT INTO graph_launch(pid, device, context, stream, graph_id, correlation, start, \"end\") "
        "SELECT pid, device, context, stream, graph_id, correlation, min(start), max(\"end\") FROM kernel "
        "WHERE graph_id IS NOT NULL GROUP BY pid, correlation, graph_id "
        "HAVING NOT EXISTS (SELECT 1 FROM graph_launch g WHERE g.pid = kernel.pid)");
    fill_sync_threads(db);
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
