#include "cli/try_run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/try_stats.h"
#include "trace_formats/common/text.h"

namespace gpuscope::cli::try_run {
namespace {

// A run with no step boundary this long after its start is given up: the
// hook is not in the job, or the job has no optimizer step.
constexpr double kNoStepLimitS = 900;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// The step boundaries each process of the job wrote (steps-PID.txt), by pid;
// a line still being written (no newline yet) is left for the next look.
std::map<long, std::vector<long long>> read_boundaries(const std::string& folder) {
  std::map<long, std::vector<long long>> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    long pid = 0;
    if (std::sscanf(name.c_str(), "steps-%ld.txt", &pid) != 1) continue;
    const std::string text = read_text(e.path().string());
    auto& v = out[pid];
    size_t start = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; start = nl + 1, nl = text.find('\n', start))
      v.push_back(std::atoll(text.substr(start, nl - start).c_str()));
  }
  return out;
}

std::map<long, nlohmann::json> read_reports(const std::string& folder) {
  std::map<long, nlohmann::json> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    long pid = 0;
    char tail[8] = {};
    if (std::sscanf(name.c_str(), "report-%ld.jso%1s", &pid, tail) != 2 || name.ends_with(".tmp")) continue;
    nlohmann::json j = nlohmann::json::parse(read_text(e.path().string()), nullptr, false);
    if (!j.is_discarded() && j.is_object()) out[pid] = std::move(j);
  }
  return out;
}

// The first fix the hook could not apply ("compile: not available on torch 1.13"), "" when none.
std::string not_applied(const std::map<long, nlohmann::json>& reports) {
  for (const auto& [pid, r] : reports) {
    if (!r.contains("fixes") || !r["fixes"].is_array()) continue;
    for (const auto& f : r["fixes"]) {
      const std::string state = f.value("state", "");
      if (state == "unavailable" || state == "needs-code-change") return f.value("said", f.value("fix", "?"));
    }
  }
  return {};
}

bool reap(pid_t child, int& status) {
  const pid_t got = waitpid(child, &status, WNOHANG);
  return got == child;
}

bool group_alive(pid_t pgid) { return kill(-pgid, 0) == 0 || errno == EPERM; }

// SIGINT to the group, then SIGTERM, then SIGKILL, until the child is reaped
// and no process of its group is left.
void end_group(pid_t child, bool& reaped, int& status, double grace_s) {
  const int sigs[] = {SIGINT, SIGTERM, SIGKILL};
  for (int sig : sigs) {
    if (!group_alive(child) && reaped) return;
    kill(-child, sig);
    const int64_t until = now_ns() + static_cast<int64_t>((sig == SIGKILL ? 5 : grace_s) * 1e9);
    while (now_ns() < until) {
      if (!reaped) reaped = reap(child, status);
      if (reaped && !group_alive(child)) return;
      usleep(20000);
    }
  }
  if (!reaped) reaped = waitpid(child, &status, 0) == child;
}

std::string exit_words(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return std::string("killed by SIG") + (name ? name : std::to_string(WTERMSIG(status)).c_str());
  }
  return "ended";
}

}  // namespace

const char* end_name(End e) {
  switch (e) {
    case End::kMeasured: return "measured";
    case End::kShort: return "short";
    case End::kFailed: return "failed";
    case End::kNotApplied: return "not-applied";
    case End::kInterrupted: return "interrupted";
    case End::kTimedOut: return "timed-out";
  }
  return "?";
}

std::string failure_line(const std::string& log_text) {
  std::istringstream in(log_text);
  std::string line, last;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line.starts_with("gpuscope: ")) continue;
    last = line;
  }
  const size_t first = last.find_first_not_of(' ');
  last = first == std::string::npos ? "" : last.substr(first);
  if (last.size() > 200) last = last.substr(0, 197) + "...";
  return terminal_safe(last);
}

Result run(const Spec& spec, const std::atomic<bool>& stop) {
  Result r;
  const int log_fd = open(spec.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int64_t start = now_ns();
  const pid_t parent = getpid();
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    r.why = std::string("fork failed: ") + std::strerror(errno);
    return r;
  }
  if (child == 0) {
    setpgid(0, 0);  // its own group: try ends the job and its DataLoader workers together
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (null_fd >= 0) dup2(null_fd, 0);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : spec.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(spec.exe.c_str(), argv.data());
    std::fprintf(stderr, "cannot run %s: %s\n", spec.exe.c_str(), std::strerror(errno));
    _exit(127);
  }
  setpgid(child, child);
  if (log_fd >= 0) close(log_fd);
  if (null_fd >= 0) close(null_fd);

  const size_t window = try_stats::window_for(spec.steps);
  bool reaped = false, we_stopped = false;
  int status = 0;
  std::optional<size_t> steady_from;
  int64_t last_report_look = 0;
  long timed_pid = 0;
  for (;;) {
    if (!reaped) reaped = reap(child, status);
    // The process with the most steps is the one timed (a launcher has none).
    const auto boundaries = read_boundaries(spec.folder);
    const std::vector<long long>* steps = nullptr;
    for (const auto& [pid, b] : boundaries)
      if (!steps || b.size() > steps->size()) steps = &b, timed_pid = pid;
    if (steps && !steps->empty() && r.first_step_s == 0) r.first_step_s = static_cast<double>(steps->front() - start) / 1e9;
    r.step_ms = steps ? try_stats::step_ms(*steps) : std::vector<double>{};
    if (!steady_from) {
      steady_from = try_stats::settled_from(r.step_ms, window, spec.tolerance);
      r.settled = steady_from.has_value();
      if (steady_from && *steady_from > spec.warmup_max) steady_from = spec.warmup_max, r.settled = false;
      if (!steady_from && r.step_ms.size() >= spec.warmup_max + window) steady_from = spec.warmup_max;
    }
    if (steady_from && r.step_ms.size() >= *steady_from + spec.steps) {
      r.end = End::kMeasured;
      break;
    }
    if (now_ns() - last_report_look > 300'000'000 || reaped) {
      last_report_look = now_ns();
      const std::string why = not_applied(read_reports(spec.folder));
      if (!why.empty()) {
        r.end = End::kNotApplied;
        r.why = why;
        break;
      }
    }
    if (reaped) {
      const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      r.end = clean ? End::kShort : End::kFailed;
      const std::string line = failure_line(read_text(spec.log));
      if (clean)
        r.why = "the job ended after " + std::to_string(r.step_ms.size()) + " steps, before " +
                std::to_string(spec.steps) + " steady steps" + (steady_from ? "" : " (its step times had not settled)");
      else
        r.why = exit_words(status) + (line.empty() ? "" : ": " + line);
      if (r.step_ms.empty() && clean) r.why = "the job ended without a step (no optimizer.step() or gpuscope.step() seen)";
      break;
    }
    const double elapsed_s = static_cast<double>(now_ns() - start) / 1e9;
    if (r.step_ms.empty() && (!steps || steps->empty()) && elapsed_s > kNoStepLimitS) {
      r.end = End::kFailed;
      r.why = read_reports(spec.folder).empty()
                  ? "the hook did not load in " + format_fixed(kNoStepLimitS, 0) +
                        " s (python -I or -S ignores PYTHONPATH's sitecustomize)"
                  : "no step boundary in " + format_fixed(kNoStepLimitS, 0) +
                        " s: no optimizer.step() or gpuscope.step() seen";
      break;
    }
    if (stop.load()) {
      r.end = End::kInterrupted;
      r.why = "interrupted";
      break;
    }
    if (spec.timeout_s > 0 && static_cast<double>(now_ns() - start) / 1e9 > spec.timeout_s) {
      r.end = End::kTimedOut;
      r.why = "no " + std::to_string(spec.steps) + " steady steps within --timeout " + format_fixed(spec.timeout_s, 0) +
              " s (" + std::to_string(r.step_ms.size()) + " steps)";
      break;
    }
    usleep(50000);
  }
  if (!reaped || group_alive(child)) {
    we_stopped = !reaped;
    end_group(child, reaped, status, spec.grace_s);
  }
  (void)we_stopped;
  r.wall_s = static_cast<double>(now_ns() - start) / 1e9;
  if (steady_from && r.step_ms.size() > *steady_from) {
    r.warmup = *steady_from;
    const size_t n = std::min(spec.steps, r.step_ms.size() - *steady_from);
    r.steady_ms.assign(r.step_ms.begin() + static_cast<long>(*steady_from),
                       r.step_ms.begin() + static_cast<long>(*steady_from + n));
  }
  auto reports = read_reports(spec.folder);
  if (reports.count(timed_pid)) r.hook = reports[timed_pid];
  else if (!reports.empty()) r.hook = reports.rbegin()->second;
  return r;
}

}  // namespace gpuscope::cli::try_run
