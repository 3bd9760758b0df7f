#include "trace_formats/store/job_end.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "trace_formats/store/live.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::store {

std::string JobEnd::how() const {
  if (exit_code) return "exit code " + std::to_string(*exit_code);
  if (recorder_killed) return "killed with gpuscope record (" + signal + ")";
  return "killed by " + (signal.empty() ? std::string("a signal") : signal);
}

std::string JobEnd::describe() const {
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3f s", static_cast<double>(wall_ns) / 1e9);
  return how() + (recorder_killed ? "; recording cut at " : " after ") + wall + ", " + std::to_string(steps) +
         (steps == 1 ? " step" : " steps") + " completed";
}

std::string job_exit_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    return "signal " + (abbrev ? "SIG" + std::string(abbrev) : std::to_string(sig));
  }
  return "exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

namespace {

int64_t completed_steps(Connection& db) {
  return db.query_int("SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM step GROUP BY pid)").value_or(0);
}

// `record` writes job_exit once it has reaped the job and then finalizes the
// file, which leaves it in rollback mode: one of its files (meta source) in WAL
// mode without job_exit, and written by nobody now, lost `record` first.
std::optional<JobEnd> recorder_killed(Reader& r) {
  const std::string& path = r.db().path();
  if (r.meta(meta_key::kSource) != "gpuscope record" || !is_wal_file(path) || live_writer(path)) return std::nullopt;
  JobEnd j;
  j.signal = "SIGKILL";
  j.recorder_killed = true;
  for (const char* t : {"kernel", "memcpy", "memset", "api_call", "range", "op", "sync", "step"})
    j.wall_ns = std::max(j.wall_ns, r.db().query_int("SELECT max(\"end\") FROM \"" + std::string(t) + "\"").value_or(0));
  j.steps = completed_steps(r.db());
  return j;
}

}  // namespace

void write_job_end(const std::string& path, const std::string& exit_text, int64_t wall_ns) {
  Writer w(path);
  w.begin();
  const int64_t steps = completed_steps(w.connection());
  w.set_meta(meta_key::kJobExit, exit_text);
  w.set_meta(meta_key::kJobWallNs, std::to_string(wall_ns));
  w.set_meta(meta_key::kJobSteps, std::to_string(steps));
  w.commit();
}

std::optional<JobEnd> read_job_end(Reader& r) {
  const std::string exit = r.meta(meta_key::kJobExit);
  if (exit.empty()) return recorder_killed(r);
  JobEnd j;
  if (exit.rfind("exit ", 0) == 0)
    j.exit_code = std::atoi(exit.c_str() + 5);
  else if (exit.rfind("signal ", 0) == 0)
    j.signal = exit.substr(7);
  else
    j.signal = exit;
  j.wall_ns = std::atoll(r.meta(meta_key::kJobWallNs, "0").c_str());
  j.steps = std::atoll(r.meta(meta_key::kJobSteps, "0").c_str());
  return j;
}

}  // namespace gpuscope::store
