// `gpuscope export RUN.db --chrome F --perfetto F --tensorboard DIR`: a
// recording (or an imported trace) as files Perfetto UI, chrome://tracing,
// TensorBoard and Holistic Trace Analysis open as their own.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/commands.h"
#include "cli/live_recording.h"
#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/text.h"
#include "analyzer/analysis.h"
#include "trace_formats/export/exporters.h"
#include "trace_formats/import/open_recording.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::cli {
namespace {

struct ExportArgs {
  std::string db, chrome, perfetto, tensorboard, run;
  std::string steps;  // "analysed", "all", or "" (analysed for TensorBoard, all for the others)
  bool force = false, quiet = false, wait = false;
};

void report(const char* what, const formats::ExportStats& s) {
  for (const auto& f : s.files)
    std::fprintf(stderr, "gpuscope: wrote %s\n", terminal_safe(f).c_str());
  std::fprintf(stderr, "gpuscope: %s: %llu events, %s%s in %.2f s (%.2f M events/s)\n", what,
               (unsigned long long)s.events, format_bytes(double(s.bytes)).c_str(),
               s.bytes != s.raw_bytes ? (" (" + format_bytes(double(s.raw_bytes)) + " uncompressed)").c_str() : "",
               s.seconds, s.seconds > 0 ? double(s.events) / 1e6 / s.seconds : 0.0);
}

// The analysed steps as `analyze` chooses them (warm-up, control stretch and
// untraced steps left out), as the export's window.
formats::ExportOptions::Window analysed_window(store::Reader& db, bool quiet) {
  analyzer::Options o;
  o.replay = false;
  const analyzer::Analysis a = analyzer::analyze(db, o);
  if (a.steps.empty()) throw Error("export --steps analysed: " + db.db().path() + ": no analysed steps");
  formats::ExportOptions::Window w;
  w.start = a.steps.front().start_ns;
  w.end = a.steps.back().end_ns;
  w.note = "analysed steps " + std::to_string(a.summary.first_step) + "-" + std::to_string(a.summary.last_step) +
           " (" + std::to_string(a.summary.steps) + " of " + std::to_string(a.summary.steps_recorded) +
           " steps), the window gpuscope analyze describes";
  w.pid = a.summary.pid;
  for (const auto& s : a.steps) w.steps.push_back({s.number, s.start_ns, s.end_ns});
  if (!quiet) std::fprintf(stderr, "gpuscope: exporting %s\n", w.note.c_str());
  return w;
}

// `export --steps all` of a recording whose analysed process recorded no
// steps (no torch plugin): analyze's steps, which the Chrome and Perfetto
// exports write as its steps, so that viewers and TensorBoard see the steps
// analyze uses. nullopt when every process has steps or analyze finds none.
std::optional<formats::ExportOptions::Steps> steps_where_none(store::Reader& db) {
  // Only a process with GPU work can be the analysed one: a recording whose
  // other processes (DataLoader workers) have no steps is not analysed here.
  if (db.db().query_int("SELECT count(*) FROM (SELECT DISTINCT pid FROM kernel) k WHERE NOT EXISTS "
                        "(SELECT 1 FROM step s WHERE s.pid = k.pid)")
          .value_or(0) == 0)
    return std::nullopt;
  analyzer::Options o;
  o.replay = false;
  try {
    const analyzer::Analysis a = analyzer::analyze(db, o);
    formats::ExportOptions::Steps s;
    s.pid = a.summary.pid;
    for (const auto& step : a.steps) s.steps.push_back({step.number, step.start_ns, step.end_ns});
    if (s.steps.empty()) return std::nullopt;
    return s;
  } catch (const Error&) {
    return std::nullopt;  // exported without steps, as recorded
  }
}

// `database`: a.db, or the recording imported from it.
void export_all(const ExportArgs& a, const std::string& database) {
  store::Reader db(database);
  formats::ExportOptions opt;
  opt.force = a.force;
  opt.progress = !a.quiet;
  // TensorBoard and HTA summarise a file from its first to its last event:
  // by default its files hold the analysed steps only.
  const bool window_all = a.steps == "analysed", window_tb = a.steps != "all" && !a.tensorboard.empty();
  std::optional<formats::ExportOptions::Window> window;
  if (window_all) {
    window = analysed_window(db, a.quiet);
  } else if (window_tb) {
    // By default only: a recording analyze cannot take is exported whole.
    try {
      window = analysed_window(db, a.quiet);
    } catch (const Error& e) {
      if (!a.quiet) std::fprintf(stderr, "gpuscope: exporting every step for TensorBoard (%s)\n", e.what());
    }
  }
  if (window_all) opt.window = window;
  else if (!a.chrome.empty() || !a.perfetto.empty() || (!a.tensorboard.empty() && !window))
    opt.steps_where_none = steps_where_none(db);
  std::vector<std::string> written;
  try {
    if (!a.chrome.empty()) {
      auto s = formats::export_chrome(db, a.chrome, opt);
      written.insert(written.end(), s.files.begin(), s.files.end());
      report("chrome", s);
    }
    if (!a.perfetto.empty()) {
      auto s = formats::export_perfetto(db, a.perfetto, opt);
      written.insert(written.end(), s.files.begin(), s.files.end());
      report("perfetto", s);
    }
    if (!a.tensorboard.empty()) {
      std::string run = a.run.empty() ? std::filesystem::path(a.db).stem().string() : a.run;
      formats::ExportOptions tb = opt;
      if (window_tb) tb.window = window;
      report("tensorboard", formats::export_tensorboard(db, a.tensorboard, run, tb));
      if (!a.quiet)
        std::fprintf(stderr, "gpuscope: open it with: tensorboard --logdir %s  (needs pip install torch-tb-profiler)\n",
                     terminal_safe(a.tensorboard).c_str());
    }
  } catch (...) {
    std::error_code ec;
    for (const auto& f : written) std::filesystem::remove(f, ec);
    throw;
  }
}

void run_export(const ExportArgs& a) {
  if (a.chrome.empty() && a.perfetto.empty() && a.tensorboard.empty())
    throw Error("export: give at least one of --chrome FILE, --perfetto FILE, --tensorboard DIR");
  if (!a.steps.empty() && a.steps != "analysed" && a.steps != "all")
    throw Error("export: --steps takes 'analysed' or 'all', not '" + a.steps + "'");
  // Refuse before reading or writing anything, so that one bad output leaves no other behind.
  check_outputs({a.chrome, a.perfetto}, {a.db}, a.force);
  handle_live_recording(a.db, a.wait);
  const formats::OpenedRecording input = formats::open_recording(a.db, !a.quiet);
  input.read([&] { export_all(a, input.path()); });
}

}  // namespace

static void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Export a recording to Chrome trace JSON, Perfetto protobuf or a TensorBoard log directory");
  static ExportArgs args;
  cmd->add_option("recording", args.db, "A gpuscope recording or a torch.profiler trace (.json, .json.gz)")->required();
  cmd->add_option("--chrome", args.chrome,
                  "Chrome trace JSON in torch.profiler's dialect (chrome://tracing, Perfetto UI, HTA); "
                  "a name ending in .gz is gzip-compressed");
  cmd->add_option("--perfetto", args.perfetto, "Perfetto protobuf trace (.pftrace) for ui.perfetto.dev");
  cmd->add_option("--tensorboard", args.tensorboard,
                  "Log directory for TensorBoard's PyTorch profiler plugin: writes LOGDIR/RUN/<host>_<pid>.<ms>.pt.trace.json.gz");
  cmd->add_option("--steps", args.steps,
                  "analysed: only the steps gpuscope analyze analyses (warm-up and untraced steps left out), with a "
                  "note naming them, so that HTA and TensorBoard summarise what analyze does; all: the whole "
                  "recording (default: analysed for --tensorboard, all for --chrome and --perfetto)");
  cmd->add_option("--run", args.run, "Run name under the TensorBoard log directory (default: the database's stem)");
  cmd->add_flag("-f,--force", args.force, "Overwrite existing outputs");
  cmd->add_flag("-q,--quiet", args.quiet, "No progress line");
  cmd->add_flag("--wait", args.wait, kWaitHelp);
  cmd->callback([] { run_export(args); });
}

namespace {
CommandRegistrar registrar(50, add_export_command);
}  // namespace

}  // namespace gpuscope::cli
