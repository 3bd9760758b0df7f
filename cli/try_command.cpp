// `gpuscope try [--fixes ...] [--from REPORT|RECORDING] -- COMMAND...`: runs
// the job once as it is and once per variant, rounds alternated, each fix
// applied from inside the job by the Python hook (python/gpuscope/_try.py),
// and prints the measured savings beside the what-if replay's predictions
// (docs/try.md). The runs, their settling and ending: try_run.h; the
// statistics: try_stats.h; the variants and predictions: try_plan.h; the
// reports: try_report.h.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "cli/commands.h"
#include "cli/record_support.h"
#include "cli/try_plan.h"
#include "cli/try_report.h"
#include "cli/try_run.h"
#include "report/json.h"
#include "report/output.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/settings.h"
#include "trace_formats/common/text.h"
#include "trace_formats/import/open_recording.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct TryOptions {
  std::string fixes;
  std::string from;
  size_t steps = 30;
  size_t rounds = 3;
  size_t max_rounds = 0;  // 0: twice --rounds
  size_t warmup_max = 50;
  double timeout_s = 0;
  double grace_s = 10;
  std::string format = "text";
  std::string output;
  bool force = false;
  std::string attach;
  bool no_history = false;
  bool no_collector = false;
  bool keep_runs = false;
  std::vector<std::string> command;
};

std::atomic<bool> g_stop{false};

void on_stop_signal(int) { g_stop.store(true); }

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Whether `exe` runs Python: python, python3.12, ... or a script whose #! line
// names one (directly or through env), such as torchrun or ./train.py.
bool is_python(const std::string& exe) {
  static const std::regex python(R"(python[0-9.]*)");
  if (std::regex_match(fs::path(exe).filename().string(), python)) return true;
  std::ifstream f(exe, std::ios::binary);
  std::string line;
  if (!f || !std::getline(f, line) || !line.starts_with("#!")) return false;
  std::istringstream words(line.substr(2));
  std::string interpreter, arg;
  words >> interpreter >> arg;
  if (fs::path(interpreter).filename() == "env") {
    if (arg == "-S" || arg == "-S-") words >> arg;
    interpreter = arg;
  }
  return std::regex_match(fs::path(interpreter).filename().string(), python);
}

// share/gpuscope/try beside the binary (the build tree and the archive have
// the same layout; the wheel keeps it under gpuscope/_native).
std::string find_hook_folder() {
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  for (const fs::path& dir : {self / "../share/gpuscope/try", self / "share/gpuscope/try"}) {
    if (fs::exists(dir / "sitecustomize.py")) return fs::canonical(dir).string();
  }
  throw Error("try: its Python hook (share/gpuscope/try/sitecustomize.py) is missing beside " + self.string());
}

// analyze's JSON report: the file as given, or the analysis of a recording.
nlohmann::json load_report(const std::string& path) {
  if (!fs::exists(path)) throw Error("try: --from " + path + ": no such file");
  const std::string head = read_text(path).substr(0, 1);
  if (head == "{") {
    nlohmann::json j = nlohmann::json::parse(read_text(path), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("findings"))
      throw Error("try: --from " + path + ": not a report of `gpuscope analyze --format json` (nor a recording)");
    return j;
  }
  const formats::OpenedRecording input = formats::open_recording(path, false);
  store::Reader reader(input.path());
  analyzer::Options opt;
  const analyzer::Analysis a = analyzer::analyze(reader, opt);
  return nlohmann::json::parse(analyzer::to_json(a));
}

std::string make_temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuscope-try-XXXXXX";
  if (!mkdtemp(pattern.data())) throw Error("try: cannot create a temporary folder: " + std::string(std::strerror(errno)));
  return pattern;
}

// The job's environment for one run: the hook first on PYTHONPATH, the
// variant, its folder, and the collector dormant as `record --on-demand` runs it.
std::vector<std::pair<std::string, std::string>> run_env(const std::string& hook, const std::string& variant,
                                                         const std::string& folder, const std::string& collector) {
  using settings::Id;
  std::vector<std::pair<std::string, std::string>> env;
  const char* pp = std::getenv("PYTHONPATH");
  env.emplace_back("PYTHONPATH", pp && *pp ? hook + ":" + pp : hook);
  env.emplace_back(settings::name(Id::kTry), variant);
  env.emplace_back(settings::name(Id::kTryDir), folder);
  if (!collector.empty()) {
    const char* preload = std::getenv("LD_PRELOAD");
    env.emplace_back("LD_PRELOAD", preload && *preload ? collector + ":" + preload : collector);
    env.emplace_back(settings::name(Id::kTraceSteps), "on-demand");
  }
  return env;
}

std::string describe_run(const try_run::Result& r) {
  if (r.end == try_run::End::kMeasured || (r.end == try_run::End::kShort && !r.steady_ms.empty())) {
    std::vector<double> s = r.steady_ms;
    std::sort(s.begin(), s.end());
    return format_fixed(s[s.size() / 2], 2) + " ms over " + std::to_string(r.steady_ms.size()) + " steps after " +
           std::to_string(r.warmup) + (r.settled ? " warm-up steps" : " steps (not settled: --warmup-max)") + ", " +
           format_fixed(r.wall_s, 1) + " s";
  }
  return std::string(try_run::end_name(r.end)) + ": " + r.why;
}

void attach_results(const std::string& path, const std::string& json_text) {
  store::Writer w(path);
  w.begin();
  w.set_meta(meta_key::kTryResults, json_text);
  w.commit();
}

void append_history(const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  const std::string cache = plugin_cache::cache_dir();
  if (cache.empty()) return;
  std::error_code ec;
  fs::create_directories(cache, ec);
  std::ofstream f(fs::path(cache) / "try_history.jsonl", std::ios::app);
  for (const auto& l : lines) f << l << "\n";
  if (!f) std::fprintf(stderr, "gpuscope: warning: could not append to %s/try_history.jsonl\n", terminal_safe(cache).c_str());
}

int run_try(TryOptions& opt) {
  if (opt.command.empty()) throw Error("try: no command given (usage: gpuscope try [options] -- python train.py ...)");
  if (opt.format != "text" && opt.format != "json") throw Error("try: --format " + opt.format + ": text or json");
  const std::string exe = find_executable(opt.command[0]);
  if (exe.empty()) throw Error("try: " + opt.command[0] + ": " + executable_problem(opt.command[0]));
  if (!is_python(exe))
    throw Error("try: " + opt.command[0] +
                " is not a Python program (python ..., or a script whose #! line runs python): try applies its fixes "
                "through a Python hook in the job");
  if (!opt.output.empty() && opt.output != "-" && fs::exists(opt.output) && !opt.force)
    throw Error("try: " + opt.output + ": already exists (use --force to overwrite)");
  if (!opt.attach.empty()) {
    if (!fs::exists(opt.attach)) throw Error("try: --attach " + opt.attach + ": no such file");
    store::Reader check(opt.attach);  // a recording this build reads, before the job runs
  }
  const std::string hook = find_hook_folder();
  std::string collector;
  if (!opt.no_collector) {
    try {
      collector = find_collector();
    } catch (const Error&) {
      std::fprintf(stderr, "gpuscope: libgpuscope_collector.so not found: the runs are timed by the hook alone\n");
    }
  }

  std::optional<nlohmann::json> report;
  if (!opt.from.empty()) report = load_report(opt.from);
  const auto fixes = opt.fixes.empty() ? std::vector<std::vector<std::string>>{} : try_plan::parse_fixes(opt.fixes);
  const try_plan::Plan plan = try_plan::make_plan(fixes, report ? &*report : nullptr);
  if (report && !plan.replay_available)
    std::fprintf(stderr, "gpuscope: %s has no what-if replay: nothing predicted to compare with\n",
                 terminal_safe(opt.from).c_str());
  for (const auto& n : plan.not_tried) std::fprintf(stderr, "gpuscope: not tried: %s\n", terminal_safe(n).c_str());
  if (plan.variants.empty()) throw Error("try: no fix to try" + std::string(plan.not_tried.empty() ? "" : " without a code change"));

  try_report::TryResult t;
  t.command = opt.command;
  t.steps = opt.steps;
  t.rounds = opt.rounds;
  t.warmup_max = opt.warmup_max;
  t.max_rounds = opt.max_rounds == 0 ? 2 * opt.rounds : opt.max_rounds;
  if (t.max_rounds < opt.rounds)
    throw Error("try: --max-rounds " + std::to_string(opt.max_rounds) + " is fewer than --rounds " + std::to_string(opt.rounds));
  t.from = opt.from;
  t.collector = !collector.empty();
  t.not_tried = plan.not_tried;
  t.baseline.variant = {};
  t.baseline.runs.resize(opt.rounds);
  for (const auto& v : plan.variants) {
    try_report::VariantResult r;
    r.variant = v;
    r.runs.resize(opt.rounds);
    t.variants.push_back(r);
  }
  const size_t per_round = plan.variants.size() + 1;
  t.runs_planned = per_round * opt.rounds;
  std::string names = "as it is";
  for (const auto& v : plan.variants) names += ", " + v.name();
  std::fprintf(stderr,
               "gpuscope try: the script runs %zu x %zu = %zu times (%s; %zu round(s) alternated), each until %zu steps "
               "after its warm-up; every run has GPUSCOPE_TRY set%s\n",
               per_round, opt.rounds, t.runs_planned, terminal_safe(names).c_str(), opt.rounds, opt.steps,
               t.max_rounds > opt.rounds
                   ? ("; a variant whose rounds disagree runs again with the job as it is, up to " +
                      std::to_string(t.max_rounds) + " rounds")
                         .c_str()
                   : "");
  std::fflush(stderr);

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old[3];
  const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; ++i) sigaction(sigs[i], &sa, &old[i]);

  const std::string temp = make_temp_folder();
  const auto start = std::chrono::steady_clock::now();
  size_t run_no = 0;
  bool baseline_failed = false;
  // One run of the job as it is (i == 0) or of variant i - 1, in `round`;
  // false when the job failed as it is (nothing left to compare with).
  const auto run_one = [&](size_t round, size_t rounds_shown, size_t i) {
    try_report::VariantResult& v = i == 0 ? t.baseline : t.variants[i - 1];
    ++run_no;
    const std::string name = i == 0 ? "as it is" : v.variant.name();
    try_run::Spec spec;
    spec.command = opt.command;
    spec.exe = exe;
    spec.folder = temp + "/run-" + std::to_string(run_no);
    fs::create_directories(spec.folder);
    spec.log = spec.folder + "/output.log";
    spec.env = run_env(hook, v.variant.name(), spec.folder, collector);
    spec.steps = opt.steps;
    spec.warmup_max = opt.warmup_max;
    spec.grace_s = opt.grace_s;
    spec.timeout_s = opt.timeout_s;
    std::fprintf(stderr, "gpuscope try: round %zu/%zu, %s ...", round + 1, rounds_shown, terminal_safe(name).c_str());
    std::fflush(stderr);
    try_run::Result r = try_run::run(spec, g_stop);
    std::fprintf(stderr, " %s\n", terminal_safe(describe_run(r)).c_str());
    if (r.end != try_run::End::kInterrupted) ++t.runs_done;
    if (r.hook.is_object()) {
      if (t.torch.empty()) t.torch = r.hook.value("torch", "");
      if (t.gpu.empty()) t.gpu = r.hook.value("gpu", "");
      if (t.device.empty()) t.device = r.hook.value("device", "");
    }
    if (r.end == try_run::End::kFailed && !r.step_ms.empty() && r.step_ms.size() < 3 && i == 0)
      r.why += " (the job's own failure: the same as without gpuscope try?)";
    const bool failed = r.end == try_run::End::kFailed || r.end == try_run::End::kTimedOut ||
                        (r.end == try_run::End::kShort && r.steady_ms.empty());
    if (v.runs.size() <= round) v.runs.resize(round + 1);
    v.runs[round] = std::move(r);
    return !(i == 0 && failed);
  };
  for (size_t round = 0; round < opt.rounds && !g_stop && !baseline_failed; ++round) {
    for (size_t i = 0; i < per_round && !g_stop; ++i) {
      try_report::VariantResult& v = i == 0 ? t.baseline : t.variants[i - 1];
      // A variant that failed or could not be applied is not run again.
      bool skip = false;
      for (const auto& r : v.runs)
        skip = skip || (r && (r->end == try_run::End::kFailed || r->end == try_run::End::kNotApplied ||
                              r->end == try_run::End::kTimedOut));
      if (skip) continue;
      if (!run_one(round, opt.rounds, i)) {
        baseline_failed = true;
        break;
      }
    }
  }
  // Extra rounds (docs/try.md): the variants whose rounds disagree run again,
  // alternated with the job as it is (A B A B ...), until their rounds agree
  // or --max-rounds; the others keep the rounds they had.
  for (size_t round = opt.rounds; round < t.max_rounds && !g_stop && !baseline_failed; ++round) {
    std::vector<size_t> again;
    for (size_t k = 0; k < t.variants.size(); ++k) {
      try_report::VariantResult& v = t.variants[k];
      if (v.runs.size() < round) continue;  // settled in an earlier extra round
      const std::string why = try_report::more_rounds_why(t, v);
      if (why.empty()) continue;
      if (v.extra_why.empty()) {
        v.extra_why = why;
        std::fprintf(stderr, "gpuscope try: %s: %s: more rounds of it and of the job as it is (at most %zu in all)\n",
                     terminal_safe(v.variant.name()).c_str(), terminal_safe(why).c_str(), t.max_rounds);
      }
      again.push_back(k + 1);
    }
    if (again.empty()) break;
    t.runs_planned += again.size() + 1;
    if (!run_one(round, t.max_rounds, 0)) {
      baseline_failed = true;
      break;
    }
    ++t.baseline.extra_rounds;
    for (size_t i : again) {
      if (g_stop) break;
      run_one(round, t.max_rounds, i);
      ++t.variants[i - 1].extra_rounds;
    }
  }
  if (t.baseline.extra_rounds > 0) t.baseline.extra_why = "paired with the variants' extra rounds";
  // The GPU the job ran on, as its hook saw it; the recording's only when the
  // job used CUDA but had not named its device yet.
  if (t.gpu.empty() && t.device == "cuda") t.gpu = plan.gpu;
  t.interrupted = g_stop.load();
  t.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0; i < 3; ++i) sigaction(sigs[i], &old[i], nullptr);
  if (!opt.keep_runs) fs::remove_all(temp);
  else std::fprintf(stderr, "gpuscope try: each run's output and hook files kept in %s\n", temp.c_str());

  try_report::summarize(t);
  const std::string json_text = report::json_text(try_report::to_json(t));
  const std::string text = opt.format == "json" ? json_text : try_report::to_text(t);
  report::write_outputs({{opt.output.empty() ? "-" : opt.output, text}}, opt.force);
  if (!opt.attach.empty()) {
    try {
      attach_results(opt.attach, json_text);
      std::fprintf(stderr, "gpuscope try: stored in %s (meta try_results): `gpuscope analyze %s` shows them\n",
                   terminal_safe(opt.attach).c_str(), terminal_safe(opt.attach).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpuscope: warning: could not store the results in %s: %s\n",
                   terminal_safe(opt.attach).c_str(), terminal_safe(e.what()).c_str());
    }
  }
  if (!opt.no_history) append_history(try_report::history_lines(t, static_cast<long long>(std::time(nullptr))));
  if (baseline_failed)
    throw Error("try: the command fails as it is (" + t.baseline.why + "): nothing to compare with");
  return t.interrupted ? 130 : 0;
}

}  // namespace

static void add_try_command(CLI::App& app) {
  static TryOptions opt;
  auto* cmd = app.add_subcommand(
      "try", "Measure fixes on the job itself: run it as it is and once per fix (applied from inside, no script edit), "
             "rounds alternated, and compare with the what-if replay");
  cmd->add_option("--fixes", opt.fixes,
                  "Variants, comma-separated; fixes of one variant joined by + (amp,compile,amp+cuda-graphs). "
                  "Default: the --from report's findings and plan entries, else every fix the hook applies");
  cmd->add_option("--from", opt.from, "analyze's JSON report, or a recording (analysed now): predictions and variants");
  cmd->add_option("--steps", opt.steps, "Steady steps timed per run (after the warm-up)")->check(whole_number(3, 100000))->capture_default_str();
  cmd->add_option("--rounds", opt.rounds, "Rounds: each runs the job as it is and every variant once")->check(whole_number(1, 100))->capture_default_str();
  cmd->add_option("--max-rounds", opt.max_rounds,
                  "Rounds at most, with the extra ones a variant gets when its rounds' savings spread over more than "
                  "4 points (default: twice --rounds; equal to --rounds: no extra rounds)")
      ->check(whole_number(1, 200));
  cmd->add_option("--warmup-max", opt.warmup_max,
                  "Steps after which a run whose step times have not settled is timed anyway")
      ->check(whole_number(0, 100000))->capture_default_str();
  cmd->add_option("--timeout", opt.timeout_s, "Seconds one run may take (0: no limit)")->check(number_in(0, 1e7));
  cmd->add_option("--grace", opt.grace_s, "Seconds a run has to end after SIGINT (then SIGTERM, then SIGKILL)")
      ->check(number_in(0.1, 600))->capture_default_str();
  cmd->add_option("--format", opt.format, "text or json (schema gpuscope-try/1, docs/try.md)")->capture_default_str();
  cmd->add_option("-o,--output", opt.output, "Write the report here instead of stdout");
  cmd->add_flag("-f,--force", opt.force, "Overwrite the -o file");
  cmd->add_option("--attach", opt.attach, "Store the measurements in this recording: analyze shows them beside its predictions");
  cmd->add_flag("--no-history", opt.no_history, "Do not append the measured/predicted pairs to the cache's try_history.jsonl");
  cmd->add_flag("--no-collector", opt.no_collector, "Run without the dormant collector (the hook times the steps either way)");
  cmd->add_flag("--keep-runs", opt.keep_runs, "Keep each run's output and the hook's files (their folder is said)");
  cmd->prefix_command();
  cmd->footer("Example: gpuscope try --from run.db -- python train.py\n"
              "The script runs (variants + 1) x rounds times, each run with GPUSCOPE_TRY=<variant> set; Ctrl-C ends "
              "the run in flight and prints what was measured.");
  cmd->callback([cmd] {
    opt.command = cmd->remaining();
    if (has_trailing_args) {
      if (!opt.command.empty())
        throw Error("try: " + std::string(opt.command.front().starts_with("-") ? "unknown option " : "unexpected argument before --: ") + opt.command.front());
      opt.command = trailing_args;
    }
    exit_code = run_try(opt);
  });
}

namespace {
CommandRegistrar registrar(32, add_try_command);
}  // namespace

}  // namespace gpuscope::cli
