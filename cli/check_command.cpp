// `gpuscope check run.db --budget budget.json`: limits without a baseline
// (median and p95 step time, peak memory, GPU utilization, forbidden
// findings). Exit 0 within budget, 1 over it, 2 bad input.
#include <string>

#include "cli/commands.h"
#include "cli/live_recording.h"
#include "regress/diff.h"
#include "report/output.h"
#include "trace_formats/common/atomic_file.h"

namespace gpuscope::cli {
namespace {

struct CheckArgs {
  std::string recording, budget, markdown, junit, json;
  bool force = false, quiet = false, wait = false;
};

void run(const CheckArgs& a) {
  const regress::Budget budget = regress::load_budget(a.budget);
  check_outputs({a.markdown, a.junit, a.json}, {a.recording, a.budget}, a.force);
  analyzer::Options ao;
  ao.progress = true;
  handle_live_recording(a.recording, a.wait);
  const regress::Recording rec = regress::Recording::load(a.recording, ao, 1);
  const regress::CheckResult c = regress::check(rec, budget, a.budget);

  std::vector<report::Output> out;
  if (!a.markdown.empty()) out.push_back({a.markdown, regress::to_markdown(c)});
  if (!a.junit.empty()) out.push_back({a.junit, regress::to_junit(c)});
  if (!a.json.empty()) out.push_back({a.json, regress::to_json(c)});
  const bool stdout_taken = a.markdown == "-" || a.junit == "-" || a.json == "-";
  if (!a.quiet && !stdout_taken) out.push_back({"-", regress::to_text(c)});
  report::write_outputs(out, a.force);
  exit_code = c.exit_code();
}

void add_check_command(CLI::App& app) {
  static CheckArgs args;
  auto* cmd = app.add_subcommand(
      "check", "Check one run against a budget (max median step time, max peak memory, forbidden findings); exit 1 when over");
  cmd->add_option("recording", args.recording, "A gpuscope recording or a torch.profiler trace (.json, .json.gz)")->required();
  cmd->add_option("--budget", args.budget,
                  "Budget JSON: {\"max_step_ms_median\": 25, \"max_step_ms_p95\": 30, \"max_peak_memory_bytes\": 40e9, "
                  "\"min_gpu_utilization\": 0.8, \"forbid_findings\": [\"host-sync\"]}")
      ->required();
  cmd->add_option("--markdown", args.markdown, "Write a Markdown report to this file, - for stdout");
  cmd->add_option("--junit", args.junit, "Write JUnit XML (one test case per limit) to this file, - for stdout");
  cmd->add_option("--json", args.json, "Write the JSON report (schema gpuscope-check/1) to this file, - for stdout");
  cmd->add_flag("-f,--force", args.force, "Overwrite existing report files");
  cmd->add_flag("-q,--quiet", args.quiet, "No text report on stdout");
  cmd->add_flag("--wait", args.wait, kWaitHelp);
  cmd->footer("Exit codes: 0 within budget, 1 over budget, 2 bad input. See docs/ci.md for the budget keys.");
  cmd->callback([] { run(args); });
}

CommandRegistrar registrar(36, add_check_command);

}  // namespace
}  // namespace gpuscope::cli
