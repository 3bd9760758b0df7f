// Markdown for a pull-request comment: the verdict first, then the top
// changes, then the rest in short tables. Names are escaped text (a code span
// would keep table pipes and HTML literally) and cut to keep the comment small.
#include "regress/diff.h"
#include "regress/report_util.h"
#include "report/format.h"
#include "report/markdown.h"

namespace gpuscope::regress {
namespace {

using namespace gpuscope::report;
using enum Column::Kind;

constexpr size_t kNameChars = 90;
std::string name_cell(const std::string& s) { return markdown_name(s, kNameChars); }

const char* verdict_icon(Verdict v) { return v == Verdict::kRegression ? "\u274c" : "\u2705"; }

void step_table(std::string& o, const DiffResult& d) {
  o += markdown_table({{""}, {"base", kNumber}, {"new", kNumber}, {"change", kNumber}});
  o += "| recording | " + name_cell(d.base.recording) + " | " + name_cell(d.next.recording) + " | |\n";
  o += "| steps analysed | " + std::to_string(d.base.steps) + " | " + std::to_string(d.next.steps) + " | |\n";
  o += markdown_row({"step time median", duration(d.base.median_ms), duration(d.next.median_ms), signed_percent(d.median_change)});
  o += markdown_row({"step time p95", duration(d.base.p95_ms), duration(d.next.p95_ms), signed_percent(d.p95_change)});
  o += "| shift estimate (95 % CI) | | | " + signed_percent(d.test.shift) + " (" + signed_percent(d.test.ci_low) +
       " to " + signed_percent(d.test.ci_high) + ") |\n";
  for (const auto& m : d.metrics) {
    if (m.name == "step time median" || m.name == "step time p95") continue;
    o += markdown_row({m.name, metric(m.base, m.unit), metric(m.next, m.unit), metric_change(m)});
  }
  o += "\n";
}

void changes_table(std::string& o, const std::vector<Change>& list, size_t limit) {
  o += markdown_table({{"#", kNumber}, {"kind"}, {"name"}, {"status"}, {"base ms", kNumber}, {"new ms", kNumber},
                       {"\u0394 ms", kNumber}, {"\u0394 %", kNumber}, {"share of change", kNumber}, {"p", kNumber}});
  size_t i = 0;
  for (const Change& c : list) {
    if (i == limit) break;
    o += markdown_row({std::to_string(++i), c.kind, name_cell(c.name), status_name(c.status), side_ms(c, false), side_ms(c, true),
                       signed_fixed(c.delta_ms, 3), optional_percent(c.delta_pct), share_text(c), markdown_escape(p_text(c))});
  }
  o += "\n";
}

}  // namespace

std::string to_markdown(const DiffResult& d) {
  std::string o = std::string("## ") + verdict_icon(d.verdict) + " gpuscope diff: " + verdict_label(d.verdict) + "\n\n";
  o += "**" + markdown_escape(d.headline) + "**\n\n";
  if (!d.causes.empty()) {
    o += "Behind it:\n\n";
    for (const Cause& c : d.causes)
      o += "- " + cause_subject(c, name_cell(c.name)) + " " + signed_fixed(c.delta_ms, 3) + " ms per step (" +
           format_fixed(c.share * 100, 0) + " % of the change)\n";
    o += "\n";
  }

  o += d.top.empty() ? std::string("### Top changes (time per step)\n\n")
                      : "### Top " + std::to_string(d.top.size()) + " changes (time per step)\n\n";
  if (d.top.empty()) o += "No kernel, op or copy changed its time per step by more than 1 %.\n\n";
  else changes_table(o, d.top, d.top.size());
  o += "Ops count their kernels' GPU time plus their own CPU time, so a kernel and the op that launches it "
       "can both appear. p: two-sided Mann-Whitney over the kernel's per-step time.\n\n";
  o += "### Step time and other measures\n\n";
  step_table(o, d);

  if (!d.findings.empty()) {
    o += "### Findings\n\n";
    for (const auto& f : d.findings) {
      o += "- **" + f.status + "**: `" + plain_text(f.id) + "` " + markdown_escape(f.title);
      if (f.base_saving_pct && f.new_saving_pct)
        o += " (saving " + format_fixed(*f.base_saving_pct, 1) + " % -> " + format_fixed(*f.new_saving_pct, 1) + " % of step)";
      else if (f.new_saving_pct) o += " (saves ~" + format_fixed(*f.new_saving_pct, 1) + " % of step)";
      else if (f.base_saving_pct) o += " (was " + format_fixed(*f.base_saving_pct, 1) + " % of step)";
      o += "\n";
    }
    o += "\n";
  }
  if (!d.copies.empty()) {
    o += "### Memory copies and sets, per step\n\n" + markdown_table({{"kind"}, {"base", kNumber}, {"new", kNumber},
                                                                      {"base ms", kNumber}, {"new ms", kNumber}});
    for (const auto& c : d.copies)
      o += markdown_row({markdown_escape(c.label), format_bytes(c.base_bytes), format_bytes(c.new_bytes), format_fixed(c.base_ms, 3),
                         format_fixed(c.new_ms, 3)});
    o += "\n";
  }
  o += "<details><summary>Step time breakdown and all notes</summary>\n\n";
  o += markdown_table({{"category"}, {"base ms per step", kNumber}, {"new ms per step", kNumber}, {"\u0394 ms", kNumber}});
  for (const auto& b : d.breakdown)
    o += markdown_row({b.name, format_fixed(b.base, 3), format_fixed(b.next, 3), signed_fixed(b.next - b.base, 3)});
  o += "\n";
  if (!d.notes.empty()) o += markdown_list(d.notes) + "\n";
  o += "</details>\n\n";
  o += "<sub>gpuscope diff: threshold " + format_percent(d.options.threshold) + ", alpha " + format_fixed(d.options.alpha, 3) +
       ", one-sided Mann-Whitney U over " + std::to_string(d.base.steps) + " + " + std::to_string(d.next.steps) +
       " steps, Hodges-Lehmann shift; schema " + kDiffSchema + "</sub>\n";
  return o;
}

std::string to_markdown(const CheckResult& c) {
  std::string o = std::string("## ") + (c.pass() ? "\u2705 gpuscope check: PASS" : "\u274c gpuscope check: FAIL") + "\n\n";
  o += name_cell(c.recording) + " against " + name_cell(c.budget) + ": " + std::to_string(c.run.steps) +
       " analysed steps, median " + duration(c.run.median_ms) + ", p95 " + duration(c.run.p95_ms) + ".\n\n";
  o += markdown_table({{"limit"}, {"budget", kNumber}, {"actual", kNumber}, {"result"}, {"detail"}});
  for (const auto& k : c.checks)
    o += markdown_row({markdown_escape(k.name), k.limit, k.actual, k.pass ? "pass" : "**FAIL**", markdown_name(k.detail, 300)});
  o += "\n";
  return o + markdown_list(c.notes);
}

}  // namespace gpuscope::regress
