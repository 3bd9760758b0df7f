// One run of `gpuscope try` (docs/try.md): the job started with the hook and
// the dormant collector, watched through the hook's files until its steps
// have settled and N more are timed, then ended (SIGINT to its process group,
// SIGTERM and SIGKILL after a grace period), leaving no process behind.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscope::cli::try_run {

struct Spec {
  std::vector<std::string> command;  // the job, as given
  std::string exe;                   // command[0] resolved
  std::vector<std::pair<std::string, std::string>> env;  // set in the job (GPUSCOPE_TRY and the rest)
  std::string folder;                // the hook's GPUSCOPE_TRY_DIR for this run (created, empty)
  std::string log;                   // the job's stdout and stderr
  size_t steps = 30;                 // steady steps to time
  size_t warmup_max = 50;            // steps after which the run counts as settled anyway
  double tolerance = 0.05;           // settling: a window's median within this share of the next one's
  double grace_s = 10;               // after SIGINT, before SIGTERM (and as long again before SIGKILL)
  double timeout_s = 0;              // the run's limit (0: none)
};

enum class End {
  kMeasured,      // N steady steps timed, the run ended by try
  kShort,         // the job ended by itself with fewer than N steady steps (measured if any)
  kFailed,        // the job failed (non-zero exit, a signal) before N steady steps
  kNotApplied,    // the hook could not apply a fix (say why); the run was stopped
  kInterrupted,   // try was interrupted (Ctrl-C) during the run
  kTimedOut,      // --timeout reached
};
const char* end_name(End e);

struct Result {
  End end = End::kFailed;
  std::string why;                 // one line for every end but kMeasured
  std::vector<double> step_ms;     // every step of the process with most steps
  size_t warmup = 0;               // steps left out before the steady ones
  bool settled = false;            // false: warm-up ended by --warmup-max
  std::vector<double> steady_ms;   // the timed steps
  nlohmann::json hook;             // the hook's report of the process timed (null: none)
  double wall_s = 0;               // from start to the last process gone
  double first_step_s = 0;         // from start to the first step boundary (0: none)
};

// Runs the job once. `stop` (set from a signal handler) ends it early (kInterrupted).
Result run(const Spec& spec, const std::atomic<bool>& stop);

// The last line of the job's output worth showing as a failure's reason
// (a Python exception's last line), "" when none.
std::string failure_line(const std::string& log_text);

}  // namespace gpuscope::cli::try_run
