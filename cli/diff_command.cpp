// `gpuscope diff BASE NEW`: is NEW slower than BASE beyond noise and the
// threshold, and which kernels and ops changed. Exit 0 no regression, 1
// regression, 2 bad input. Reports: text on stdout, Markdown, JUnit, JSON, HTML.
#include <string>

#include "cli/commands.h"
#include "cli/live_recording.h"
#include "regress/diff.h"
#include "report/output.h"
#include "trace_formats/common/atomic_file.h"

namespace gpuscope::cli {
namespace {

struct DiffArgs {
  std::string base, next, threshold = "5%", markdown, junit, json, html;
  double alpha = 0.01;
  int top = 10;
  bool force = false, quiet = false, wait = false;
};

void run(const DiffArgs& a) {
  regress::DiffOptions opt;
  opt.threshold = regress::parse_percent(a.threshold, "--threshold");
  opt.alpha = a.alpha;
  opt.top = a.top;
  check_outputs({a.markdown, a.junit, a.json, a.html}, {a.base, a.next}, a.force);

  analyzer::Options ao;
  ao.progress = true;
  handle_live_recording(a.base, a.wait);
  if (a.next != a.base) handle_live_recording(a.next, a.wait);
  const regress::Recording base = regress::Recording::load(a.base, ao);
  const regress::Recording next = regress::Recording::load(a.next, ao);
  const regress::DiffResult d = regress::diff(base, next, opt);

  std::vector<report::Output> out;
  if (!a.markdown.empty()) out.push_back({a.markdown, regress::to_markdown(d)});
  if (!a.junit.empty()) out.push_back({a.junit, regress::to_junit(d)});
  if (!a.json.empty()) out.push_back({a.json, regress::to_json(d)});
  if (!a.html.empty()) out.push_back({a.html, regress::to_html(d)});
  const bool stdout_taken = a.markdown == "-" || a.junit == "-" || a.json == "-" || a.html == "-";
  if (!a.quiet && !stdout_taken) out.push_back({"-", regress::to_text(d)});
  report::write_outputs(out, a.force);
  exit_code = d.exit_code();
}

void add_diff_command(CLI::App& app) {
  static DiffArgs args;
  auto* cmd = app.add_subcommand(
      "diff", "Compare two runs: exit 1 when NEW's step time is significantly slower than BASE's beyond the threshold, "
              "naming the kernels and ops behind it");
  cmd->add_option("base", args.base, "Baseline: a gpuscope recording or a torch.profiler trace (.json, .json.gz)")->required();
  cmd->add_option("new", args.next, "The run to judge, same kinds of input")->required();
  cmd->add_option("--threshold", args.threshold,
                  "Smallest step-time slowdown that fails, in percent: 5% (default), 2.5, 10%");
  cmd->add_option("--alpha", args.alpha, "Significance level of the step-time test (default 0.01)")
      ->check(CLI::Range(1e-9, 0.5));
  cmd->add_option("--top", args.top, "Rows in the top-changes tables (default 10)")->check(whole_number(1, 1000));
  cmd->add_option("--markdown", args.markdown, "Write a Markdown report (a pull-request comment) to this file, - for stdout");
  cmd->add_option("--junit", args.junit, "Write JUnit XML to this file, - for stdout");
  cmd->add_option("--json", args.json, "Write the JSON report (schema gpuscope-diff/1) to this file, - for stdout");
  cmd->add_option("--html", args.html, "Write a self-contained HTML report to this file, - for stdout");
  cmd->add_flag("-f,--force", args.force, "Overwrite existing report files");
  cmd->add_flag("-q,--quiet", args.quiet, "No text report on stdout");
  cmd->add_flag("--wait", args.wait, kWaitHelp);
  cmd->footer(
      "Step times are compared with a one-sided Mann-Whitney U test; a regression needs p < alpha AND a\n"
      "Hodges-Lehmann shift estimate above the threshold. Exit codes: 0 no regression, 1 regression, 2 bad input.\n"
      "See docs/ci.md.");
  cmd->callback([] { run(args); });
}

CommandRegistrar registrar(35, add_diff_command);

}  // namespace
}  // namespace gpuscope::cli
