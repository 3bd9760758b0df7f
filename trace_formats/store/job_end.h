// How the recorded job ended, as `gpuscope record` saw it (meta `job_exit`,
// `job_wall_ns`, `job_steps`): written once the job has been reaped, read by
// `info` and `analyze`, which say it in their first lines. Recordings made
// without `record` (LD_PRELOAD, imports) have none. A file of `record`'s that
// nobody writes any more and that has none lost `record` itself before the job
// ended: killed by SIGKILL (it catches the other signals it could end by),
// which killed the job too (its parent-death signal); that is said instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace_formats/store/reader.h"

namespace gpuscope::store {

struct JobEnd {
  std::optional<int> exit_code;  // when the job exited
  std::string signal;            // when a signal ended it, e.g. "SIGINT"
  int64_t wall_ns = 0;           // from its start to its end
  int64_t steps = 0;             // steps it completed (the most of any of its processes)
  // `gpuscope record` was killed (SIGKILL) and the job with it: nobody wrote
  // job_exit; wall_ns is then the recording's last event (where it was cut).
  bool recorder_killed = false;
  // Stopped by the user: SIGINT (Ctrl-C), SIGTERM or SIGHUP.
  bool stopped() const { return signal == "SIGINT" || signal == "SIGTERM" || signal == "SIGHUP"; }
  // Exited non-zero, or was ended by another signal (SIGKILL, SIGSEGV, ...).
  bool failed() const { return !stopped() && (!exit_code || *exit_code != 0); }
  // Did not run to a clean exit.
  bool unclean() const { return failed() || stopped(); }
  // "exit code 1", "killed by SIGKILL" or "killed with gpuscope record (SIGKILL)".
  std::string how() const;
  // "exit code 1 after 1.234 s, 0 steps completed", or "killed with gpuscope
  // record (SIGKILL); recording cut at 5.120 s, 210 steps completed".
  std::string describe() const;
};

// The meta value of a wait(2) status: "exit N" or "signal NAME".
std::string job_exit_text(int wait_status);

// Stores the job's end in the recording at `path` (its steps counted from the file).
void write_job_end(const std::string& path, const std::string& exit_text, int64_t wall_ns);

// nullopt when the recording has no `job_exit` and `record` was not killed
// writing it (see above; a file still being written is not).
std::optional<JobEnd> read_job_end(Reader& recording);

}  // namespace gpuscope::store
