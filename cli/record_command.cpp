// `gpuscope record [options] -- command args...`: runs the command exactly as
// given with the collector injected, then finalizes the shared database.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <utility>

#include "cli/commands.h"
#include "trace_formats/common/text.h"
#include "cli/nvml/nvml_poller.h"
#include "cli/record_support.h"
#include "trace_formats/common/output_name.h"
#include "trace_formats/common/settings.h"
#include "trace_formats/common/steps_window.h"
#include "trace_formats/store/job_end.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::cli {
namespace {

struct RecordOptions {
  std::string output;
  bool force = false;
  // memory (CUPTI allocation records) and nvml (sampled by this process) are opt-in
  // (docs/PERFORMANCE.md, "Known problems").
  std::string trace = "cuda,nvtx,torch";
  double delay_s = 0;
  double duration_s = 0;
  std::string sample;  // "ON,OFF" seconds: GPU and ops traced ON s out of every ON+OFF s
  std::string steps;   // "A-B" or "A-": torch steps A to B traced, the others not
  bool full = false;   // no control stretch: every step traced
  bool on_demand = false;  // dormant until `gpuscope trigger` (docs/on-demand.md)
  bool help_env = false;
  std::vector<std::string> command;
};

// --sample ON,OFF in seconds -> "ON_MS,OFF_MS" for GPUSCOPE_SAMPLE_MS.
std::string sample_ms(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Error("record: --sample " + text + ": " + why + " (expected ON,OFF in seconds, e.g. 1,9)");
  };
  const auto comma = text.find(',');
  if (comma == std::string::npos) throw bad("no comma");
  double v[2];
  const std::string parts[2] = {text.substr(0, comma), text.substr(comma + 1)};
  for (int i = 0; i < 2; ++i) {
    size_t used = 0;
    try {
      v[i] = std::stod(parts[i], &used);
    } catch (const std::exception&) {
      throw bad("'" + parts[i] + "' is not a number");
    }
    if (used != parts[i].size() || !std::isfinite(v[i])) throw bad("'" + parts[i] + "' is not a number");
    if (v[i] < 0.1 || v[i] > 86400) throw bad("each part must be between 0.1 and 86400 seconds");
  }
  return std::to_string(std::llround(v[0] * 1000)) + "," + std::to_string(std::llround(v[1] * 1000));
}

// Whether the comma-separated --trace list names `source`.
bool traces(const std::string& list, const std::string& source) {
  return ("," + list + ",").find("," + source + ",") != std::string::npos;
}

// --steps A-B: a window of torch steps, so it needs the torch plugin and
// cannot be combined with the windows and duty cycles that count time.
void validate_steps(const RecordOptions& opt) {
  uint64_t first = 0, last = 0;
  if (!parse_steps_window(opt.steps, first, last))
    throw Error("record: --steps " + opt.steps + ": expected A-B or A- (step numbers from 0, A <= B), e.g. 20-29");
  if (!opt.sample.empty() || opt.delay_s > 0 || opt.duration_s > 0)
    throw Error("record: --steps cannot be combined with --sample, --delay or --duration");
  if (!traces(opt.trace, "torch"))
    throw Error("record: --steps counts torch steps: --trace must include torch");
}

volatile sig_atomic_t g_child_pid = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  // A terminal's Ctrl-C already reached the child (same process group); only
  // forward signals sent to us alone, so the job does not see them twice.
  if (g_child_pid > 0 && info && (info->si_code == SI_USER || info->si_code == SI_QUEUE))
    kill(g_child_pid, sig);
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// gpuscope_N.db in the working folder, the first N no other run holds;
// returns the path and the claimed descriptor (see claim_output).
std::pair<std::string, int> claim_default_output() {
  for (int n = 1;; ++n) {
    const std::string name = std::filesystem::absolute("gpuscope_" + std::to_string(n) + ".db").string();
    if (std::filesystem::exists(name)) continue;
    try {
      return {name, claim_output(name, false)};
    } catch (const Error&) {
      if (!std::filesystem::exists(name)) throw;  // not taken by a concurrent run: a real error
    }
  }
}

void create_database(const std::string& path, const RecordOptions& opt, int64_t origin_ns) {
  store::Writer w(path);
  w.begin();
  w.set_meta(meta_key::kOriginNs, std::to_string(origin_ns));
  w.set_meta(meta_key::kOriginUtcNs, std::to_string(realtime_ns()));
  w.set_meta(meta_key::kGpuscopeVersion, GPUSCOPE_VERSION);
  w.set_meta(meta_key::kSource, "gpuscope record");
  w.set_meta(meta_key::kTrace, opt.trace);
  if (!opt.sample.empty()) w.set_meta(meta_key::kSample, opt.sample);
  if (!opt.steps.empty()) w.set_meta(meta_key::kTraceSteps, opt.steps);
  if (opt.full) w.set_meta(meta_key::kFull, "1");
  std::string cmd;
  for (const auto& a : opt.command) cmd += (cmd.empty() ? "" : " ") + a;
  w.set_meta(meta_key::kCommand, cmd);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  w.set_meta(meta_key::kHost, host);
  w.commit();
}

// --on-demand writes no file of its own: each capture is one (`gpuscope trigger -o`).
void validate_on_demand(const RecordOptions& opt) {
  if (!opt.output.empty())
    throw Error("record: --on-demand writes one file per capture: name it with gpuscope trigger -o, not record -o");
  if (!opt.sample.empty() || !opt.steps.empty() || opt.delay_s > 0 || opt.duration_s > 0 || opt.full)
    throw Error("record: --on-demand cannot be combined with --sample, --steps, --delay, --duration or --full");
  if (traces(opt.trace, "nvml")) throw Error("record: --on-demand does not sample nvml (record polls it, not the job)");
}

int run_record(RecordOptions& opt) {
  if (opt.command.empty()) throw Error("record: no command given (usage: gpuscope record [options] -- command args...)");
  validate_trace_list(opt.trace);
  if (opt.on_demand) validate_on_demand(opt);
  if (opt.delay_s < 0 || opt.duration_s < 0) throw Error("record: --delay and --duration must be >= 0");
  const std::string sample = opt.sample.empty() ? "" : sample_ms(opt.sample);
  if (!opt.steps.empty()) validate_steps(opt);
  if (const auto var = unset_output_name_variable(opt.output))
    throw Error("record: -o " + opt.output + ": %q{" + *var + "} would expand to nothing: the environment variable '" +
                *var + "' is not set or is empty");
  std::string exe = find_executable(opt.command[0]);
  if (exe.empty()) throw Error("record: " + opt.command[0] + ": " + executable_problem(opt.command[0]));
  std::string collector = find_collector();

  // Held (and locked) until this process ends, so that no other run takes the file meanwhile.
  std::string output;
  [[maybe_unused]] int claimed = -1;
  if (opt.on_demand) {
    // No file: each capture makes its own.
  } else if (opt.output.empty()) {
    std::tie(output, claimed) = claim_default_output();
  } else {
    output = std::filesystem::absolute(expand_output_name(opt.output, getpid())).lexically_normal().string();
    claimed = claim_output(output, opt.force);
  }

  int64_t origin = monotonic_ns();
  try {
    if (!opt.on_demand) create_database(output, opt, origin);
  } catch (...) {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(output + suffix);
    throw;
  }

  using settings::Id;
  std::vector<std::pair<std::string, std::string>> env = {
      {settings::name(Id::kOutput), output},
      {settings::name(Id::kTrace), opt.trace},
      {settings::name(Id::kOriginNs), std::to_string(origin)},
      {settings::name(Id::kWindowStartNs), std::to_string(origin + static_cast<int64_t>(opt.delay_s * 1e9))},
      {settings::name(Id::kWindowEndNs),
       opt.duration_s > 0 ? std::to_string(origin + static_cast<int64_t>((opt.delay_s + opt.duration_s) * 1e9))
                          : std::string("0")},
  };
  const char* preload = std::getenv("LD_PRELOAD");
  env.emplace_back("LD_PRELOAD", preload && *preload ? collector + ":" + preload : collector);
  if (!std::getenv("CUDA_INJECTION64_PATH")) env.emplace_back("CUDA_INJECTION64_PATH", collector);
  if (!std::getenv("NVTX_INJECTION64_PATH")) env.emplace_back("NVTX_INJECTION64_PATH", collector);
  if (!sample.empty()) env.emplace_back(settings::name(Id::kSampleMs), sample);
  if (!opt.steps.empty()) env.emplace_back(settings::name(Id::kTraceSteps), opt.steps);
  if (opt.on_demand) {
    env.emplace_back(settings::name(Id::kTraceSteps), kOnDemandSteps);
    std::erase_if(env, [](const auto& kv) { return kv.first == settings::name(Id::kOutput); });
  }
  // The table's values under record (record, record_full), unless the user set
  // them: ops linked to their kernels after the job (store::finalize_recording),
  // not by CUPTI external correlation around every op; ops in some steps (the
  // plugin's "auto": when the job's CUDA calls are traced), the other steps'
  // kernels given their ops by position (store/place_ops.h). --full traces
  // everything: ops and the allocator's events in every step, and no control
  // stretch, whatever GPUSCOPE_CONTROL_STEPS says.
  for (const settings::Setting& s : settings::kSettings) {
    const char* value = opt.full ? s.record_full : s.record;
    if (value && (!settings::is_set(s.id) || (opt.full && s.id == Id::kControlSteps))) env.emplace_back(s.name, value);
  }

  struct sigaction sa {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);

  const pid_t parent = getpid();
  const int64_t job_start_ns = monotonic_ns();
  pid_t child = fork();
  if (child < 0) throw Error(std::string("record: fork failed: ") + std::strerror(errno));
  if (child == 0) {
    // The job ends with gpuscope, also when gpuscope is killed: the parent
    // may already be gone before prctl, so its pid is checked after.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(128 + SIGKILL);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : opt.command) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    std::fprintf(stderr, "gpuscope: error: cannot run %s: %s\n", terminal_safe(exe).c_str(), std::strerror(errno));
    _exit(127);
  }
  g_child_pid = child;
  if (opt.on_demand)
    std::fprintf(stderr,
                 "gpuscope: job %d runs on demand, untraced: `gpuscope trigger %d` captures its next steps "
                 "(`gpuscope ps` lists its processes; `gpuscope trigger --job %d` every rank of a launcher)\n",
                 static_cast<int>(child), static_cast<int>(child), static_cast<int>(child));
  NvmlPoller nvml;
  if (traces(opt.trace, "nvml")) {
    int64_t start = origin + static_cast<int64_t>(opt.delay_s * 1e9);
    int64_t end = opt.duration_s > 0 ? start + static_cast<int64_t>(opt.duration_s * 1e9) : 0;
    if (!nvml.start(output, child, {origin, start, end}))
      std::fprintf(stderr, "gpuscope: NVML not available: recording without nvml samples\n");
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int64_t job_wall_ns = monotonic_ns() - job_start_ns;
  g_child_pid = 0;
  nvml.stop();

  // How the job ended, for `info` and `analyze` (meta job_exit); before finalize, which leaves the file in rollback mode.
  // On demand there is no file of record's own: each capture was finalized as it ended.
  if (!opt.on_demand) {
    try {
      store::write_job_end(output, store::job_exit_text(status), job_wall_ns);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpuscope: warning: could not store how the job ended in %s: %s\n",
                   terminal_safe(output).c_str(), terminal_safe(e.what()).c_str());
    }
    finalize_and_report(output);
  }

  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// --help-env: the settings table (trace_formats/common/settings.h), as docs/settings.md shows it.
void print_settings() {
  std::printf("Environment variables gpuscope reads (record sets those it has options for):\n");
  for (const settings::Setting& s : settings::kSettings) {
    const std::string note = settings::record_note(s);
    std::printf("  %-28s %s, default: %s%s\n  %-28s %s\n", s.name, s.type, settings::shown_default(s).c_str(),
                note.empty() ? "" : (" (" + note + ")").c_str(), "", s.meaning);
  }
}

}  // namespace

static void add_record_command(CLI::App& app) {
  static RecordOptions opt;
  auto* cmd = app.add_subcommand("record", "Run a command with the collector injected and record it into one SQLite file");
  cmd->add_option("-o,--output", opt.output,
                  "Output database (default gpuscope_N.db); %p pid, %h host, %q{VAR} environment")
      ->check(file_name());
  cmd->add_flag("-f,--force", opt.force, "Overwrite an existing output file");
  cmd->add_option("--trace", opt.trace, "Sources to record, comma-separated, from cuda,nvtx,torch,memory,nvml,overhead (memory, nvml and overhead are opt-in)")
      ->capture_default_str();
  cmd->add_option("--delay", opt.delay_s, "Seconds to wait before recording (the job starts at once)")
      ->check(number_in(0, 1e9));
  cmd->add_option("--duration", opt.duration_s, "Seconds to record after the delay (0 = until the job ends)")
      ->check(number_in(0, 1e9));
  cmd->add_option("--sample", opt.sample,
                  "ON,OFF: trace kernels, API calls and ops for ON seconds out of every ON+OFF (switching at step "
                  "boundaries when torch steps are seen); steps and ranges are recorded throughout");
  cmd->add_option("--steps", opt.steps,
                  "A-B: trace torch steps A to B only (numbered from 0, as `analyze --steps` takes them; A-: from A "
                  "to the end), CUPTI torn down before and after; steps and ranges are recorded throughout");
  cmd->add_flag("--full", opt.full,
                "Trace every step (every step of --steps or --sample's windows when given): no control stretch (by "
                "default steps 4-11 run untraced, at least 0.2 s, so that "
                "`analyze` knows the job's step time without tracing and judges every finding against it), and torch "
                "ops and allocator memory recorded in every traced step (by default ops in 2 steps of every 50, the other "
                "steps' kernels given their ops by position after the job)");
  cmd->add_flag("--on-demand", opt.on_demand,
                "Run the job untraced, the collector dormant (no CUPTI, no op callbacks; steps counted), until "
                "`gpuscope trigger PID` captures its next steps into a recording of their own (docs/on-demand.md)");
  cmd->add_flag("--help-env", opt.help_env, "Print every GPUSCOPE_* environment variable with its default and meaning");
  // Everything from the first non-option argument (or after --) is the job's command line, verbatim.
  cmd->prefix_command();
  cmd->footer("Example: gpuscope record -o run.db -- python train.py --epochs 1\n"
              "The job's exit code, stdout and stderr are passed through unchanged.");
  cmd->callback([cmd] {
    if (opt.help_env) {
      print_settings();
      return;
    }
    opt.command = cmd->remaining();
    if (has_trailing_args) {
      if (!opt.command.empty())
        throw Error("record: " + std::string(opt.command.front().starts_with("-") ? "unknown option " : "unexpected argument before --: ") + opt.command.front());
      opt.command = trailing_args;
    }
    exit_code = run_record(opt);
  });
}

namespace {
CommandRegistrar registrar(10, add_record_command);
}  // namespace

}  // namespace gpuscope::cli
