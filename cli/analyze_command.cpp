// `gpuscope analyze run.db`: the report (text, json, md, html) from gs_analyzer.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/report/tried.h"
#include "analyzer/rule_docs.h"
#include "cli/commands.h"
#include "cli/live_recording.h"
#include "report/output.h"
#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/text.h"
#include "trace_formats/import/open_recording.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::cli {
namespace {

struct AnalyzeArgs {
  std::string path, format = "text", output, steps, calibration;
  std::optional<int64_t> device, pid, rank;
  std::vector<std::string> what_if;
  int top = 10;
  bool force = false, list_rules = false, no_what_if = false, wait = false, no_history = false;
  double fail_on_saving = -1;
};

// Each fix once per combination and each combination (as a set) once: `amp+amp`
// or fifty `--what-if amp` would otherwise be planned over again. One line says
// what was left out.
std::vector<std::vector<std::string>> unique_fix_lists(const std::vector<std::string>& given) {
  std::vector<std::vector<std::string>> lists;
  std::vector<std::string> keys, notes;
  std::map<std::string, int> times;  // by the combination's key: how often it was given
  std::map<std::string, std::string> spelled;
  for (const auto& text : given) {
    std::vector<std::string> ids;
    for (auto& id : analyzer::parse_fix_list(text)) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
        ids.push_back(std::move(id));
      } else {
        const std::string note = "'" + text + "' names " + id + " twice";
        if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
      }
    }
    std::vector<std::string> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    std::string key;
    for (const auto& id : sorted) key += id + "+";
    if (times[key]++ == 0) {
      lists.push_back(std::move(ids));
      keys.push_back(key);
      for (const auto& id : lists.back()) spelled[key] += (spelled[key].empty() ? "" : "+") + id;
    }
  }
  for (const auto& key : keys)
    if (times[key] > 1) notes.push_back("'" + spelled[key] + "' given " + std::to_string(times[key]) + " times");
  if (!notes.empty()) {
    std::string all;
    for (const auto& n : notes) all += (all.empty() ? "" : "; ") + n;
    std::fprintf(stderr, "gpuscope: note: --what-if: each fix and each combination is planned once (%s)\n",
                 terminal_safe(all).c_str());
  }
  return lists;
}

namespace fs = std::filesystem;

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// What analyze learns from this machine (docs/try.md, "Learning from
// measurements"): --calibration FILE, else the tables `gpuscope calibrate`
// wrote into the cache (<cache>/calibration/*.json; a damaged one is skipped
// with a warning); and, unless --no-history, `gpuscope try`'s
// <cache>/try_history.jsonl (damaged lines counted, one warning).
void read_local_inputs(const AnalyzeArgs& args, analyzer::Options& opt) {
  if (!args.calibration.empty()) {
    const auto text = read_text(args.calibration);
    if (!text || fs::is_directory(args.calibration))
      throw Error("analyze: --calibration " + args.calibration + ": no such file or not readable");
    analyzer::whatif::Calibration c = analyzer::whatif::parse_calibration(*text, args.calibration);
    c.file = fs::path(args.calibration).filename().string();
    c.path = args.calibration;
    opt.calibrations.forced.push_back(std::move(c));
  }
  const std::string cache = plugin_cache::cache_dir();
  if (cache.empty()) return;
  std::error_code ec;
  if (args.calibration.empty() && fs::is_directory(fs::path(cache) / "calibration", ec)) {
    std::vector<fs::path> tables;
    for (const auto& e : fs::directory_iterator(fs::path(cache) / "calibration", ec))
      if (e.path().extension() == ".json" && !e.path().filename().string().starts_with(".")) tables.push_back(e.path());
    std::sort(tables.begin(), tables.end());
    for (const auto& p : tables) {
      try {
        const auto text = read_text(p);
        if (!text) throw Error(p.string() + ": not readable");
        analyzer::whatif::Calibration c = analyzer::whatif::parse_calibration(*text, p.string());
        c.file = p.filename().string();
        c.path = p.string();
        opt.calibrations.local.push_back(std::move(c));
      } catch (const Error& e) {
        std::fprintf(stderr, "gpuscope: warning: calibration table skipped: %s\n", terminal_safe(e.what()).c_str());
      }
    }
  }
  if (args.no_history) return;
  const fs::path history = fs::path(cache) / "try_history.jsonl";
  if (!fs::exists(history, ec)) return;
  const auto text = read_text(history);
  if (!text) {
    std::fprintf(stderr, "gpuscope: warning: %s: not readable; predictions not calibrated by earlier tries\n",
                 terminal_safe(history.string()).c_str());
    return;
  }
  opt.try_history = analyzer::whatif::parse_try_history(*text, history.string());
  if (opt.try_history.damaged_lines > 0)
    std::fprintf(stderr, "gpuscope: warning: %s: %lld damaged line%s skipped\n", terminal_safe(history.string()).c_str(),
                 static_cast<long long>(opt.try_history.damaged_lines), opt.try_history.damaged_lines == 1 ? "" : "s");
}

void run(const AnalyzeArgs& args) {
  if (args.list_rules) {
    std::fputs(analyzer::rules_markdown().c_str(), stdout);
    return;
  }
  if (args.path.empty()) throw Error("analyze: a recording is required (gpuscope analyze run.db)");
  check_outputs({args.output}, {args.path}, args.force);
  analyzer::Options opt;
  opt.device = args.device;
  opt.pid = args.pid;
  opt.rank = args.rank;
  opt.top = args.top;
  opt.progress = true;
  if (!args.steps.empty()) analyzer::parse_step_range(args.steps, opt);
  opt.what_if = unique_fix_lists(args.what_if);
  if (args.no_what_if && !args.what_if.empty()) throw Error("analyze: --what-if and --no-what-if contradict each other");
  if (args.no_what_if && !args.calibration.empty())
    throw Error("analyze: --calibration and --no-what-if contradict each other");
  opt.replay = !args.no_what_if;
  if (opt.replay) read_local_inputs(args, opt);

  handle_live_recording(args.path, args.wait);
  const formats::OpenedRecording input = formats::open_recording(args.path, opt.progress);
  analyzer::Analysis a = input.read([&] {
    store::Reader reader(input.path());
    analyzer::Analysis result = analyzer::analyze(reader, opt);
    result.tried = analyzer::tried_fixes(reader.meta(meta_key::kTryResults), result.whatif);  // gpuscope try --attach
    return result;
  });
  if (input.imported()) a.summary.recording = std::filesystem::path(args.path).filename().string();
  std::string text;
  if (args.format == "json") text = analyzer::to_json(a);
  else if (args.format == "md" || args.format == "markdown") text = analyzer::to_markdown(a);
  else if (args.format == "html") text = analyzer::to_html(a);
  else text = analyzer::to_text(a);

  report::write_outputs({{args.output.empty() ? "-" : args.output, text}}, args.force);

  if (args.fail_on_saving >= 0)
    for (const auto& f : a.findings)
      if (f.saving_pct >= args.fail_on_saving) exit_code = 1;
}

void add_analyze_command(CLI::App& app) {
  static AnalyzeArgs args;
  auto* cmd = app.add_subcommand(
      "analyze", "Step-time breakdown, hotspots, GPU idle causes and ranked findings with the fix");
  cmd->alias("analyse");
  cmd->add_option("recording", args.path, "A gpuscope recording or a torch.profiler trace (.json, .json.gz)");
  cmd->add_option("--format", args.format, "Report format: text (default), json, md, html")
      ->check(CLI::IsMember({"text", "json", "md", "markdown", "html"}));
  cmd->add_option("-o,--output", args.output, "Write the report to this file instead of stdout")->check(file_name());
  cmd->add_flag("-f,--force", args.force, "Overwrite an existing output file");
  cmd->add_option("--steps", args.steps, "Analyse steps A-B by step number (also A-, -B, A); default: all but warm-up");
  cmd->add_option("--device", args.device, "Analyse this CUDA device (default: the busiest)")
      ->check(whole_number(LLONG_MIN, LLONG_MAX));
  cmd->add_option("--pid", args.pid, "Analyse this process (default: the one with the most GPU work)")
      ->check(whole_number(LLONG_MIN, LLONG_MAX));
  cmd->add_option("--rank", args.rank, "Analyse the process whose RANK is N (distributed jobs; instead of --pid)")
      ->check(whole_number(LLONG_MIN, LLONG_MAX))
      ->excludes("--pid");
  cmd->add_option("--top", args.top, "Rows in the hotspot tables (default 10)")->check(whole_number(1, 1000));
  cmd->add_option("--fail-on-saving", args.fail_on_saving,
                  "Exit 1 when a finding's estimated saving is at least this percent of step time")
      ->check(number_in(0, 100));
  cmd->add_option("--what-if", args.what_if,
                  "Also predict the step with these fixes applied together, e.g. amp+cuda-graphs (repeatable; ids: "
                  "amp, channels-last, fused-optimizer, compile, cuda-graphs, host-sync, dataloader-stall, pageable-memcpy)");
  cmd->add_flag("--no-what-if", args.no_what_if,
                "No what-if replay: no plan, and findings keep their rule's own estimate (docs/rules.md)");
  cmd->add_option("--calibration", args.calibration,
                  "The what-if speed table to use (gpuscope calibrate's, schema gpuscope-calibration/1) instead of "
                  "the one chosen by the recording's GPU");
  cmd->add_flag("--no-history", args.no_history,
                "Do not correct the what-if predictions by gpuscope try's earlier measurements on this GPU "
                "(try_history.jsonl in the cache)");
  cmd->add_flag("--wait", args.wait, kWaitHelp);
  cmd->add_flag("--list-rules", args.list_rules, "Print every rule with its thresholds and saving model (Markdown)");
  cmd->callback([] { run(args); });
}

CommandRegistrar registrar(30, add_analyze_command);

}  // namespace
}  // namespace gpuscope::cli
