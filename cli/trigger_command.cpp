// `gpuscope trigger PID`: a capture of the next steps of a job started with
// `gpuscope record --on-demand` (docs/on-demand.md), or of every rank of a
// job in the same step window (--job, --all), into one recording; or, with
// --when/--every, captures the job starts by itself while this command waits
// (each its own file, %n numbered). The collector writes; this command creates
// the file, waits, and finalizes it as `record` does. Interrupted (Ctrl-C,
// SIGTERM, SIGHUP), it ends the capture there and still finalizes the file;
// `--stop PID` ends one from another terminal.
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/control_client.h"
#include "cli/record_support.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/output_name.h"
#include "trace_formats/common/text.h"
#include "trace_formats/store/capture_end.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::cli {
namespace {

struct TriggerOptions {
  long pid = 0;
  long long steps = 0;  // 0: the default (20) unless --duration
  double duration_s = 0;
  long long control = -1;
  std::string output;
  bool force = false;
  bool job = false, all = false;
  bool stop = false;  // --stop PID: end the capture under way
  std::string when, every, cooldown = "600";
};

// Set by SIGINT, SIGTERM or SIGHUP while a capture runs (run_capture).
volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int sig) { g_interrupted = sig; }

// The handlers while waiting for a capture, then the defaults again: a second
// Ctrl-C ends this command at once (the job then ends and finalizes the capture itself).
void catch_interrupts(bool on) {
  struct sigaction sa {};
  sa.sa_handler = on ? on_interrupt : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

// Asks process `pid` to end its capture now; false when it had none under way
// any more (it ended meanwhile) or did not answer.
bool ask_stop(long pid, std::string& why) {
  try {
    ControlConnection c(pid, "trigger");
    c.ask({"stop", {}});
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

constexpr long long kDefaultSteps = 20;

int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string read_environ(long pid, const std::string& name) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/environ").c_str(), "rb");
  if (!f) return {};
  std::string all;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) all.append(buf, n);
  std::fclose(f);
  const std::string key = name + "=";
  for (size_t at = 0; at < all.size();) {
    const size_t end = all.find('\0', at);
    const std::string entry = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (entry.rfind(key, 0) == 0) return entry.substr(key.size());
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

// "90", "90s", "30m", "2h" -> seconds; throws Error naming the option.
double seconds_of(const std::string& option, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  const std::string unit = end ? end : "";
  if (unit == "m" || unit == "min") v *= 60;
  else if (unit == "h") v *= 3600;
  else if (!unit.empty() && unit != "s") v = -1;
  if (text.empty() || end == text.c_str() || !std::isfinite(v) || v <= 0 || v > 1e7)
    throw Error("trigger: " + option + " " + text + ": expected a duration such as 90s, 30m or 2h");
  return v;
}

// --when slow-step=2x -> 2.
double slow_factor(const std::string& when) {
  const std::string prefix = "slow-step=";
  if (when.rfind(prefix, 0) != 0) {
    if (when.rfind("data-wait", 0) == 0)
      throw Error("trigger: --when " + when + ": data-wait rules are not supported yet (slow-step=FACTORx is)");
    throw Error("trigger: --when " + when + ": expected slow-step=FACTORx, e.g. slow-step=2x");
  }
  std::string v = when.substr(prefix.size());
  if (!v.empty() && (v.back() == 'x' || v.back() == 'X')) v.pop_back();
  char* end = nullptr;
  const double f = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !std::isfinite(f) || f <= 1 || f > 1000)
    throw Error("trigger: --when " + when + ": the factor must be a number above 1, e.g. slow-step=2x");
  return f;
}

// The first gpuscope_<tag>_N.db in the working folder that does not exist.
std::string default_output(const std::string& tag) {
  for (int n = 1;; ++n) {
    const auto p = std::filesystem::absolute("gpuscope_" + tag + "_" + std::to_string(n) + ".db");
    if (!std::filesystem::exists(p)) return p.string();
  }
}

// What trigger says about the capture in its file: before the capture when it
// creates the file (--job, --all: the ranks share its clock origin), after it
// when the job created it (one process: no schema to create before the job
// is asked, which keeps the first traced step close to the trigger).
void write_capture_meta(const std::string& path, long pid, std::optional<int64_t> origin, const std::string& request) {
  store::Writer w(path);
  w.begin();
  if (origin) {
    w.set_meta(meta_key::kOriginNs, std::to_string(*origin));
    w.set_meta(meta_key::kOriginUtcNs, std::to_string(clock_ns(CLOCK_REALTIME)));
  }
  w.set_meta(meta_key::kGpuscopeVersion, GPUSCOPE_VERSION);
  w.set_meta(meta_key::kSource, "gpuscope trigger");
  const std::string trace = read_environ(pid, "GPUSCOPE_TRACE");
  w.set_meta(meta_key::kTrace, trace.empty() ? "cuda,nvtx,torch" : trace);
  w.set_meta(meta_key::kCommand, process_command(pid));
  w.set_meta(meta_key::kCaptureRequest, request);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  w.set_meta(meta_key::kHost, host);
  w.commit();
}

// The processes --job PID (PID and its descendants) or --all names: those
// with a rank when any has one (the ranks, not torchrun's own process), else
// those that have ended steps, else all.
std::vector<long> job_processes(const TriggerOptions& opt) {
  std::vector<std::pair<long, control::Message>> found;
  for (long pid : listening_pids()) {
    if (opt.job) {
      bool in_job = false;
      for (long p = pid, hops = 0; p > 1 && hops < 64; p = parent_pid(p), ++hops)
        if (p == opt.pid) in_job = true;
      if (!in_job) continue;
    }
    try {
      found.emplace_back(pid, process_status(pid, "trigger"));
    } catch (const Error&) {
      // another user's process, or one that ended meanwhile
    }
  }
  const auto keep = [&](auto pred) {
    std::vector<long> out;
    for (const auto& [pid, s] : found)
      if (pred(s)) out.push_back(pid);
    return out;
  };
  // A rank's helpers that inherited its environment (spawned DataLoader
  // workers) have its RANK but no steps: per rank, the process with the most.
  std::map<std::string, std::pair<long, uint64_t>> by_rank;
  for (const auto& [pid, s] : found) {
    const std::string rank = s.get("rank", "-");
    const uint64_t steps = std::strtoull(s.get("steps", "0").c_str(), nullptr, 10);
    if (rank == "-") continue;
    auto it = by_rank.find(rank);
    if (it == by_rank.end() || steps > it->second.second) by_rank[rank] = {pid, steps};
  }
  std::vector<long> pids;
  for (const auto& [rank, best] : by_rank) pids.push_back(best.first);
  std::sort(pids.begin(), pids.end());
  if (pids.empty()) pids = keep([](const control::Message& s) { return s.get("steps", "0") != "0"; });
  if (pids.empty()) pids = keep([](const control::Message&) { return true; });
  if (pids.empty())
    throw Error(opt.job ? "trigger: --job " + std::to_string(opt.pid) +
                              ": no process of that job runs gpuscope on demand (gpuscope ps lists those that do)"
                        : std::string("trigger: --all: no process of yours runs gpuscope on demand"));
  return pids;
}

struct Started {
  long pid;
  std::unique_ptr<ControlConnection> connection;
};

// Asks every process for the capture; an empty vector and `passed` when a
// process was past the common start step (the caller tries a later one).
std::vector<Started> start_all(const std::vector<long>& pids, const TriggerOptions& opt, const std::string& path,
                               uint64_t start_step, bool create, bool& passed) {
  std::vector<Started> started;
  passed = false;
  for (long pid : pids) {
    auto c = std::make_unique<ControlConnection>(pid, "trigger");
    control::Message req{"capture", {{"file", path}, {"create", create ? "1" : "0"}}};
    if (opt.steps) req.fields["steps"] = std::to_string(opt.steps);
    if (opt.duration_s > 0) req.fields["seconds"] = std::to_string(opt.duration_s);
    if (opt.control >= 0) req.fields["control"] = std::to_string(opt.control);
    if (start_step) req.fields["start_step"] = std::to_string(start_step);
    c->send(req);
    control::Message answer;
    const bool got = c->receive(answer);
    if (got && answer.verb == "started") {
      started.push_back({pid, std::move(c)});
      continue;
    }
    const std::string why = got ? answer.get("why", "refused") : "it closed the control channel";
    // Those already started end now; their stretch in the file is dropped with it.
    for (auto& s : started) {
      ControlConnection cancel(s.pid, "trigger");
      cancel.ask({"cancel", {}});
      control::Message done;
      while (s.connection->receive(done, 30000) && done.verb != "done") {
      }
    }
    if (why.find("has passed") != std::string::npos && start_step) {
      passed = true;
      return {};
    }
    throw Error("trigger: process " + std::to_string(pid) + ": " + why);
  }
  return started;
}

int run_capture(TriggerOptions opt, const std::vector<long>& pids, const std::string& tag) {
  // Each process first: one clear line, and no file, for one that cannot be captured.
  uint64_t most_steps = 0;
  double step_ms = 0, control_min_ms = 0;
  long long control_steps = 0;
  for (long pid : pids) {
    const control::Message s = process_status(pid, "trigger");
    if (s.get("state") != "dormant")
      throw Error("trigger: process " + std::to_string(pid) + " is capturing already (into " +
                  terminal_safe(s.get("file", "?")) + ")");
    most_steps = std::max<uint64_t>(most_steps, std::strtoull(s.get("steps", "0").c_str(), nullptr, 10));
    step_ms = std::max(step_ms, std::strtod(s.get("step_ms", "0").c_str(), nullptr));
    control_steps = std::max(control_steps, std::strtoll(s.get("control_steps", "0").c_str(), nullptr, 10));
    control_min_ms = std::max(control_min_ms, std::strtod(s.get("control_min_ms", "0").c_str(), nullptr));
  }
  if (pids.size() > 1) {
    // Every process must trace the same steps: what each would time by itself
    // (the control stretch's minimum, --duration) is counted in steps here,
    // from the slowest process's median step.
    const auto in_steps = [&](double ms) {
      return step_ms > 0 ? static_cast<long long>(std::ceil(ms / step_ms)) : 0;
    };
    if (opt.control < 0) opt.control = std::max(control_steps, in_steps(control_min_ms));
    if (opt.duration_s > 0) {
      opt.steps = std::max(1LL, in_steps(opt.duration_s * 1000));
      if (step_ms <= 0) opt.steps = kDefaultSteps;
      std::fprintf(stderr, "gpuscope: --duration %s s is %lld steps of %s ms for every process\n",
                   format_fixed(opt.duration_s, 3).c_str(), opt.steps, format_fixed(step_ms, 1).c_str());
      opt.duration_s = 0;
    }
  }
  const std::string path =
      opt.output.empty() ? default_output(tag)
                         : std::filesystem::absolute(expand_output_name(opt.output, pids.front())).lexically_normal().string();
  std::string request = opt.duration_s > 0 ? "seconds=" + format_fixed(opt.duration_s, 3)
                                           : "steps=" + std::to_string(opt.steps);
  if (opt.control >= 0) request += " control=" + std::to_string(opt.control);
  // The ranks of a job begin at one step number, a few steps ahead of the
  // furthest: the requests reach them within milliseconds.
  uint64_t margin = 3;
  std::vector<Started> started;
  int claimed = -1;
  if (pids.size() == 1) {
    // The job creates the file (O_EXCL) as it begins: nothing to create here first.
    if (std::filesystem::exists(path)) {
      if (!opt.force) throw Error(path + ": already exists (use --force to overwrite)");
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    }
    bool passed = false;
    started = start_all(pids, opt, path, 0, true, passed);
  }
  for (int attempt = 0; pids.size() > 1; ++attempt) {
    claimed = claim_output(path, opt.force);
    try {
      write_capture_meta(path, pids.front(), clock_ns(CLOCK_MONOTONIC), request);
      bool passed = false;
      started = start_all(pids, opt, path, most_steps + margin, false, passed);
      if (!passed) break;
      if (attempt == 3) throw Error("trigger: the job's ranks kept passing the common start step; try again");
    } catch (...) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
      close(claimed);
      throw;
    }
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    close(claimed);
    margin *= 4;
    for (long pid : pids)
      most_steps = std::max<uint64_t>(
          most_steps, std::strtoull(process_status(pid, "trigger").get("steps", "0").c_str(), nullptr, 10));
  }
  const std::string what = opt.duration_s > 0 ? "the steps of " + format_fixed(opt.duration_s, 1) + " s"
                                              : "the next " + std::to_string(opt.steps) + " steps";
  std::fprintf(stderr, "gpuscope: capturing %s of %zu process(es) into %s (after %s untraced control steps)\n",
               what.c_str(), started.size(), terminal_safe(path).c_str(),
               opt.control >= 0 ? std::to_string(opt.control).c_str() : "the job's");
  std::set<std::string> windows;
  g_interrupted = 0;
  catch_interrupts(true);
  int interrupted = 0;
  bool abandoned = false;
  const auto stop_all = [&] {
    interrupted = g_interrupted;
    catch_interrupts(false);
    std::fprintf(stderr, "gpuscope: interrupted: ending the capture now (the file is kept and finalized; "
                         "Ctrl-C again leaves that to the job)\n");
    for (const auto& s : started) {
      std::string why;
      if (!ask_stop(s.pid, why) && why.find("no capture under way") == std::string::npos)
        std::fprintf(stderr, "gpuscope: warning: %s\n", terminal_safe(why).c_str());
    }
  };
  for (auto& s : started) {
    control::Message done;
    bool got = false;
    for (;;) {
      got = interrupted ? s.connection->receive(done, -1) : s.connection->receive_unless(done, &g_interrupted);
      if (got && done.verb == "done") break;
      if (got) continue;
      if (!interrupted && g_interrupted) {
        stop_all();
        continue;
      }
      break;
    }
    if (got && done.get("abandoned") == "1") abandoned = true;
    if (!got) {
      std::fprintf(stderr, "gpuscope: process %ld ended during the capture; %s holds what it recorded until then\n",
                   s.pid, terminal_safe(path).c_str());
      try {
        store::close_cut_capture(path, s.pid);  // its traced stretch never got its end
      } catch (const std::exception& e) {
        std::fprintf(stderr, "gpuscope: warning: %s\n", terminal_safe(e.what()).c_str());
      }
      continue;
    }
    windows.insert(done.fields.count("first_step") ? done.get("first_step") + "-" + done.get("last_step")
                                                   : std::string("none"));
  }
  if (!interrupted) catch_interrupts(false);
  if (abandoned) {
    // Interrupted before the capture began (no step boundary came): nothing
    // captured; the job removed the file it created, this one is removed here.
    if (claimed >= 0) {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
      close(claimed);
    }
    std::fprintf(stderr, "gpuscope: interrupted before the capture began (no step ended since the trigger): "
                         "nothing captured, no file written; the job runs on dormant\n");
    return 128 + (interrupted ? interrupted : SIGINT);
  }
  if (pids.size() == 1) {
    try {
      write_capture_meta(path, pids.front(), std::nullopt, request);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpuscope: warning: %s\n", terminal_safe(e.what()).c_str());
    }
  }
  finalize_and_report(path);
  if (claimed >= 0) close(claimed);
  if (interrupted)
    std::fprintf(stderr, "gpuscope: capture interrupted: %s traced of the %s asked for; the job runs on dormant\n",
                 windows.size() == 1 && *windows.begin() != "none" ? ("steps " + *windows.begin()).c_str()
                                                                    : "no step",
                 opt.duration_s > 0 ? (format_fixed(opt.duration_s, 1) + " s").c_str()
                                    : (std::to_string(opt.steps) + " steps").c_str());
  if (windows.size() == 1 && *windows.begin() != "none")
    std::fprintf(stderr, "gpuscope: captured steps %s (counted from the job's start) of %zu process(es) into %s\n",
                 windows.begin()->c_str(), started.size(), terminal_safe(path).c_str());
  else if (!windows.empty())
    std::fprintf(stderr, "gpuscope: warning: the processes' traced steps differ or are missing (%s)\n",
                 [&] {
                   std::string all;
                   for (const auto& w : windows) all += (all.empty() ? "" : ", ") + w;
                   return all;
                 }()
                     .c_str());
  return interrupted ? 128 + interrupted : 0;
}

// --stop PID: the capture under way ends now; its file is finalized by the
// `gpuscope trigger` that started it (still waiting), or by the job.
int run_stop(const TriggerOptions& opt) {
  ControlConnection c(opt.pid, "trigger");
  const control::Message stopping = c.ask({"stop", {}});
  const std::string file = terminal_safe(stopping.get("file", "?"));
  const bool by_trigger = stopping.get("finalized_by") == "trigger";
  std::fprintf(stderr, "gpuscope: ending the capture of process %ld into %s (after step %s)\n", opt.pid,
               file.c_str(), stopping.get("steps_ended", "?").c_str());
  control::Message done;
  bool got = false;
  try {
    while ((got = c.receive(done, 120000)) && done.verb != "done") {
    }
  } catch (const Error&) {
    got = false;
  }
  if (!got) {
    std::fprintf(stderr, "gpuscope: process %ld has not closed %s within 120 s; `gpuscope ps` shows its state\n",
                 opt.pid, file.c_str());
    return 1;
  }
  if (done.get("abandoned") == "1") {
    std::fprintf(stderr, "gpuscope: the capture had not begun (no step ended since it was asked for): nothing "
                         "captured; the job runs on dormant\n");
    return 0;
  }
  const std::string steps = done.fields.count("first_step")
                                ? "steps " + done.get("first_step") + "-" + done.get("last_step")
                                : std::string("no traced step");
  const std::string who = by_trigger ? "the gpuscope trigger that started it finalizes it"
                          : done.get("finalized") == "1" ? "finalized by the job"
                                                         : "not finalized (see the job's stderr)";
  std::fprintf(stderr, "gpuscope: capture stopped: %s holds %s; %s; the job runs on dormant\n", file.c_str(),
               steps.c_str(), who.c_str());
  return 0;
}

// --when / --every: the job captures by itself; this command waits, finalizes
// each capture and ends when the job does (or on Ctrl-C, which disarms the rule).
int run_watch(const TriggerOptions& opt) {
  const double factor = opt.when.empty() ? 0 : slow_factor(opt.when);
  const double every = opt.every.empty() ? 0 : seconds_of("--every", opt.every);
  const double cooldown = seconds_of("--cooldown", opt.cooldown);
  std::string pattern = opt.output.empty() ? "gpuscope_" + std::to_string(opt.pid) + "_capture_%n.db" : opt.output;
  if (pattern.find("%n") == std::string::npos) {
    const auto dot = pattern.rfind('.');
    pattern.insert(dot == std::string::npos || dot < pattern.rfind('/') + 1 ? pattern.size() : dot, "_%n");
  }
  pattern = std::filesystem::absolute(pattern).lexically_normal().string();
  const control::Message s = process_status(opt.pid, "trigger");
  (void)s;
  ControlConnection c(opt.pid, "trigger");
  std::string rule = opt.when.empty() ? "" : opt.when;
  if (every > 0) rule += (rule.empty() ? "" : ",") + std::string("every=") + opt.every;
  rule += ",cooldown=" + opt.cooldown;
  control::Message req{"watch", {{"file", pattern}, {"cooldown", std::to_string(cooldown)}, {"rule", rule}}};
  if (factor > 0) req.fields["slow"] = std::to_string(factor);
  if (every > 0) req.fields["every"] = std::to_string(every);
  req.fields["steps"] = std::to_string(opt.duration_s > 0 ? 0 : opt.steps);
  if (opt.duration_s > 0) req.fields["seconds"] = std::to_string(opt.duration_s);
  if (opt.control >= 0) req.fields["control"] = std::to_string(opt.control);
  c.ask(req);
  std::fprintf(stderr, "gpuscope: watching process %ld (%s): each capture into %s; Ctrl-C ends the watch\n", opt.pid,
               terminal_safe(rule).c_str(), terminal_safe(pattern).c_str());
  control::Message m;
  while (c.receive(m, -1)) {
    if (m.verb == "started") {
      std::fprintf(stderr, "gpuscope: %s: capturing into %s\n", terminal_safe(m.get("trigger")).c_str(),
                   terminal_safe(m.get("file")).c_str());
    } else if (m.verb == "skipped") {
      std::fprintf(stderr, "gpuscope: %s: no capture: %s\n", terminal_safe(m.get("trigger")).c_str(),
                   terminal_safe(m.get("why")).c_str());
    } else if (m.verb == "done") {
      finalize_and_report(m.get("file"));
      if (m.fields.count("first_step"))
        std::fprintf(stderr, "gpuscope: captured steps %s-%s into %s\n", m.get("first_step").c_str(),
                     m.get("last_step").c_str(), terminal_safe(m.get("file")).c_str());
    }
  }
  std::fprintf(stderr, "gpuscope: process %ld ended; the watch is over\n", opt.pid);
  return 0;
}

int run_trigger(TriggerOptions& opt) {
  if (opt.stop) {
    if (opt.pid <= 0) throw Error("trigger: --stop needs the PID whose capture to end (gpuscope ps lists them)");
    if (opt.job || opt.all || opt.steps || opt.duration_s > 0 || opt.control >= 0 || !opt.output.empty() ||
        !opt.when.empty() || !opt.every.empty())
      throw Error("trigger: --stop takes only the PID whose capture to end");
    return run_stop(opt);
  }
  if (opt.all && (opt.job || opt.pid))
    throw Error("trigger: --all takes no PID and no --job (it captures every process of yours that runs on demand)");
  if (!opt.all && opt.pid <= 0) throw Error("trigger: no PID given (usage: gpuscope trigger PID [--steps N | --duration S] [-o FILE]; gpuscope ps lists them)");
  if (opt.steps && opt.duration_s > 0) throw Error("trigger: --steps and --duration exclude each other");
  if (!opt.steps && opt.duration_s <= 0) opt.steps = kDefaultSteps;
  if (!opt.when.empty() || !opt.every.empty()) {
    if (opt.job || opt.all) throw Error("trigger: --when and --every watch one process (not --job or --all)");
    return run_watch(opt);
  }
  if (opt.job || opt.all) return run_capture(opt, job_processes(opt), opt.all ? "all" : "job" + std::to_string(opt.pid));
  return run_capture(opt, {opt.pid}, std::to_string(opt.pid));
}

}  // namespace

static void add_trigger_command(CLI::App& app) {
  static TriggerOptions opt;
  auto* cmd = app.add_subcommand(
      "trigger", "Capture the next steps of a job started with `gpuscope record --on-demand`, into a recording");
  cmd->add_option("pid", opt.pid, "The job's process (gpuscope ps lists them); with --job, its launcher (torchrun)")
      ->check(whole_number(1, 1LL << 30));
  cmd->add_option("--steps", opt.steps, "Steps to trace (default 20), after the job's untraced control stretch")
      ->check(whole_number(1, 1000000));
  cmd->add_option("--duration", opt.duration_s, "Seconds to trace instead (ended at a step boundary)")
      ->check(number_in(0.001, 86400));
  cmd->add_option("--control", opt.control,
                  "Untraced steps before the traced ones, which time the job without tracing (default: the job's, 8 "
                  "and at least 0.2 s; 0: none)")
      ->check(whole_number(0, 100000));
  cmd->add_option("-o,--output", opt.output,
                  "Output recording (default gpuscope_PID_N.db); %p pid, %h host; with --when/--every %n numbers the "
                  "captures");
  cmd->add_flag("-f,--force", opt.force, "Overwrite an existing output file");
  cmd->add_flag("--job", opt.job, "PID is a launcher (torchrun): capture every rank of the job in the same steps, one file");
  cmd->add_flag("--all", opt.all, "Capture every process of yours that runs on demand, in the same steps, one file");
  cmd->add_flag("--stop", opt.stop,
                "End the capture under way in process PID now (Ctrl-C on its gpuscope trigger does the same); its file "
                "keeps the steps traced so far");
  cmd->add_option("--when", opt.when,
                  "slow-step=FACTORx: the job captures by itself when a step takes FACTOR times the median of the "
                  "last steps; this command waits and finalizes each capture");
  cmd->add_option("--every", opt.every, "DURATION (90s, 30m, 2h): the job captures by itself periodically");
  cmd->add_option("--cooldown", opt.cooldown, "At most one capture per this DURATION with --when/--every (default 600 s)")
      ->capture_default_str();
  cmd->footer("Examples: gpuscope trigger 4242 --steps 20 -o slow.db\n"
              "          gpuscope trigger --job $(pgrep -f torch.distributed.run) -o job.db\n"
              "          gpuscope trigger 4242 --when slow-step=2x --cooldown 10m -o slow_%n.db\n"
              "          gpuscope trigger --stop 4242");
  cmd->callback([] { exit_code = run_trigger(opt); });
}

static void add_ps_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("ps", "List the processes of yours that run gpuscope on demand (gpuscope trigger PID)");
  cmd->callback([] {
    std::vector<control::Message> rows;
    for (long pid : listening_pids()) {
      try {
        rows.push_back(process_status(pid, "ps"));
      } catch (const Error&) {
        // another user's process, or one that ended meanwhile
      }
    }
    if (rows.empty()) {
      std::fprintf(stderr, "gpuscope: no process of yours runs gpuscope on demand (gpuscope record --on-demand -- ...)\n");
      return;
    }
    std::printf("%-8s %-5s %-8s %-10s %-8s %s\n", "PID", "RANK", "STEPS", "STATE", "CAPTURES", "COMMAND");
    for (const auto& r : rows)
      std::printf("%-8s %-5s %-8s %-10s %-8s %s\n", r.get("pid").c_str(), r.get("rank", "-").c_str(),
                  r.get("steps").c_str(), r.get("state").c_str(), r.get("captures", "0").c_str(),
                  terminal_safe(r.get("cmd")).c_str());
  });
}

namespace {
CommandRegistrar trigger_registrar(12, add_trigger_command);
CommandRegistrar ps_registrar(13, add_ps_command);
}  // namespace

}  // namespace gpuscope::cli
