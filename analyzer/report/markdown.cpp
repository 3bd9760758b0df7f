// The Markdown report (for CI comments and wikis) and the generated rule
// reference that docs/rules.md embeds.
#include <algorithm>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/rule_docs.h"
#include "analyzer/job_end.h"
#include "analyzer/report/format.h"
#include "analyzer/report/tried.h"
#include "report/markdown.h"

namespace gpuscope::analyzer {
namespace {

using namespace report;
using enum Column::Kind;

// Recorded names in tables and lists, as escaped text (report/markdown.h).
std::string code_span(const std::string& s) { return markdown_name(s, 120); }

void summary(std::string& o, const Analysis& a) {
  const Summary& s = a.summary;
  o += "## Summary\n\n" + markdown_table({{""}, {""}});
  o += "| wall time | " + format_fixed(static_cast<double>(s.wall_ns) / 1e9, 3) + " s analysed (recording " +
       format_fixed(static_cast<double>(s.recording_ns) / 1e9, 3) + " s) |\n";
  o += "| steps | " + std::to_string(s.steps) + " (" + markdown_escape(s.step_source_detail) + ") |\n";
  o += "| step time | mean " + ms_unit(s.step_ms_mean) + ", median " + ms_unit(s.step_ms_median) + ", p95 " +
       ms_unit(s.step_ms_p95) + " |\n";
  if (!s.outlier_steps.empty()) {
    std::string list;
    for (size_t i = 0; i < s.outlier_steps.size() && i < 20; ++i) list += (i ? ", " : "") + std::to_string(s.outlier_steps[i]);
    o += "| outlier steps | " + list + " |\n";
  }
  if (s.device >= 0) {
    for (const auto& d : s.devices)
      o += "| GPU utilization, device " + std::to_string(d.id) + " | " + format_percent(d.utilization) + " |\n";
    o += "| SM efficiency (estimated) | " + format_percent(s.sm_efficiency) + " |\n";
    o += "| tensor-core share of kernel time | " + format_percent(s.tensor_core_share) + " |\n";
  }
  o += "\n";
}

void breakdown(std::string& o, const Analysis& a) {
  o += "## Step time breakdown\n\nMean per step; each moment counted once, in this order.\n\n";
  o += markdown_table({{"category"}, {"ms per step", kNumber}, {"share", kNumber}});
  const double n = std::max<double>(1, static_cast<double>(a.summary.steps));
  const double total = static_cast<double>(a.breakdown.total());
  for (int i = 0; i < Breakdown::kCategories; ++i) {
    const double v = static_cast<double>(a.breakdown.get(i));
    o += markdown_row({Breakdown::category(i), format_fixed(v / 1e6 / n, 3), format_percent(total > 0 ? v / total : 0)});
  }
  o += "\n";
  if (a.summary.device >= 0) {
    o += "## GPU idle by cause\n\n" + markdown_table({{"cause"}, {"ms per step", kNumber}, {"% of step", kNumber}, {"gaps", kNumber}});
    for (const auto& c : a.idle.causes)
      o += markdown_row({idle_cause_name(c.cause), format_fixed(c.ms_per_step, 3), format_fixed(c.pct_of_step, 1), std::to_string(c.gaps)});
    o += "\n";
  }
}

void tables(std::string& o, const Analysis& a) {
  if (!a.top_kernels.empty()) {
    o += "## Top kernels\n\n" + markdown_table({{"kernel"}, {"origin"}, {"TC"}, {"count", kNumber}, {"total ms", kNumber},
                                                {"mean us", kNumber}, {"share", kNumber}, {"grid"}, {"block"}});
    for (const auto& k : a.top_kernels)
      o += markdown_row({code_span(k.name), k.origin, k.tensor_core ? "yes" : "no", std::to_string(k.count), ms(k.total_ns),
                         format_fixed(k.mean_ns / 1e3, 1), format_percent(k.share), k.grid, k.block});
    o += "\n";
  }
  if (!a.top_ops.empty()) {
    o += "## Top ops\n\n" + markdown_table({{"op"}, {"count", kNumber}, {"GPU ms", kNumber}, {"self CPU ms", kNumber},
                                            {"input shapes"}, {"dtypes"}});
    for (const auto& p : a.top_ops)
      o += markdown_row({code_span(p.name), std::to_string(p.count), ms(p.gpu_ns), ms(p.self_cpu_ns), markdown_escape(p.shapes),
                         markdown_escape(p.dtypes)});
    o += "\n";
  }
  if (!a.copies.empty()) {
    o += "## Memory copies and sets\n\n" + markdown_table({{"kind"}, {"direction"}, {"from"}, {"to"}, {"count", kNumber},
                                                           {"bytes", kNumber}, {"ms", kNumber}, {"GB/s", kNumber}});
    for (const auto& c : a.copies)
      o += markdown_row({c.kind, c.direction, c.src_kind, c.dst_kind, std::to_string(c.count), format_bytes(static_cast<double>(c.bytes)),
                         ms(c.total_ns), format_fixed(c.gb_per_s, 1)});
    o += "\n";
  }
  if (!a.api_calls.empty()) {
    o += "## CUDA API calls\n\n" + markdown_table({{"call"}, {"count", kNumber}, {"total ms", kNumber}, {"mean us", kNumber},
                                                   {"failed", kNumber}});
    for (const auto& c : a.api_calls)
      o += markdown_row({code_span(c.name), std::to_string(c.count), ms(c.total_ns), format_fixed(c.mean_ns / 1e3, 1), std::to_string(c.failed)});
    o += "\n";
  }
  const MemorySummary& m = a.memory;
  if (m.torch_allocator || m.cuda_events) {
    o += "## Memory\n\n" + markdown_table({{""}, {""}});
    if (m.torch_allocator)
      o += "| peak allocated / reserved | " + format_bytes(static_cast<double>(m.peak_allocated)) + " / " +
           format_bytes(static_cast<double>(m.peak_reserved)) + " |\n";
    if (m.cuda_events) o += "| peak CUDA memory in use | " + format_bytes(static_cast<double>(m.peak_device_used)) + " |\n";
    if (m.capacity > 0) o += "| capacity | " + format_bytes(static_cast<double>(m.capacity)) + " (peak " + format_percent(m.peak_fraction) + ") |\n";
    o += "| allocator calls per step | " + format_fixed(m.allocs_per_step, 1) + " |\n\n";
  }
}

void ranks(std::string& o, const Analysis& a, const char* marked = "The analysed rank is in bold; pick another with `--rank N`.") {
  if (a.ranks.empty()) return;
  o += std::string("## Ranks\n\nMean per step; each moment counted once: waiting in collectives, loading data, computing, other. ") +
       marked + "\n\n";
  const bool nccl = has_nccl_kernels(a.ranks);
  o += markdown_table(rank_columns(nccl));
  for (const auto& r : a.ranks) {
    std::vector<std::string> cells = rank_cells(r, nccl);
    if (r.analysed) cells[0] = "**" + cells[0] + "**";
    cells[1] = markdown_name(cells[1], 60);
    o += markdown_row(cells);
  }
  o += "\n";
}

void findings(std::string& o, const Analysis& a, const char* none = nullptr) {
  o += "## Findings\n\n";
  if (a.findings.empty()) {
    o += none ? std::string("None: ") + none + ".\n\n"
        : a.summary.device < 0 ? "None: no GPU activity to analyse.\n\n" : "None: no rule found a saving worth reporting.\n\n";
    return;
  }
  o += markdown_table({{"#", kNumber}, {"rule"}, {"severity"}, {"saving ms/step", kNumber}, {"saving %", kNumber}});
  int i = 0;
  for (const auto& f : a.findings)
    o += markdown_row({std::to_string(++i), "`" + f.id + "`", severity_name(f.severity), format_fixed(f.saving_ms_per_step, 3),
                       format_fixed(f.saving_pct, 1)});
  o += "\n";
  i = 0;
  for (const auto& f : a.findings) {
    o += "### " + std::to_string(++i) + ". `" + f.id + "`: " + markdown_escape(f.title) + "\n\n";
    o += "**Estimated saving:** " + ms_unit(f.saving_ms_per_step) + " per step (" + format_fixed(f.saving_pct, 1) + " %), severity " +
         severity_name(f.severity) + ".";
    if (const std::string p = report::finding_prediction(f); !p.empty()) o += " " + markdown_escape(p) + ".";
    o += "\n\n";
    o += markdown_escape(f.evidence.summary) + "\n\n";
    if (!f.evidence.metrics.empty()) {
      o += markdown_table({{"metric"}, {"value", kNumber}});
      for (const auto& m : f.evidence.metrics)
        o += markdown_row({markdown_escape(m.name), format_fixed(m.value, 3) + " " + markdown_escape(m.unit)});
      o += "\n";
    }
    if (!f.evidence.top.empty()) {
      o += "Top contributors:\n\n";
      for (const auto& c : f.evidence.top)
        o += "- " + code_span(c.name) + ": " + format_fixed(c.total_ms, 3) + " ms, " + std::to_string(c.count) + "x" +
             (c.detail.empty() ? "" : " (" + markdown_escape(c.detail) + ")") + "\n";
      o += "\n";
    }
    if (!f.evidence.ranges.empty()) {
      o += "Time ranges:\n\n";
      for (const auto& r : f.evidence.ranges)
        o += "- " + seconds(r.start_ns) + " to " + seconds(r.end_ns) + ": " + markdown_escape(r.label) + "\n";
      o += "\n";
    }
    o += "**Fix:** " + markdown_escape(f.fix.text) + "\n\n```python\n" + f.fix.code + "```\n\n";
  }
}

std::string notes(const std::vector<std::string>& list) {
  return list.empty() ? std::string() : "## Notes\n\n" + markdown_list(list) + "\n";
}

void plan(std::string& o, const Analysis& a) {
  const std::string check = report::whatif_check_line(a);
  if (check.empty()) return;
  o += "## Plan\n\n" + markdown_escape(check) + "\n\n" + markdown_list(report::plan_lines(a)) + "\n";
}

// `gpuscope try --attach`'s measurements beside the predictions (analyzer/report/tried.h).
void tried(std::string& o, const Analysis& a) {
  if (a.tried.empty()) return;
  std::vector<std::string> lines;
  for (const auto& t : a.tried) lines.push_back(tried_line(t));
  o += "## Tried (measured by gpuscope try)\n\n" + markdown_list(lines) + "\n";
}

}  // namespace

std::string to_markdown(const Analysis& a) {
  std::string o = "# gpuscope analysis: " + markdown_escape(a.summary.recording) + "\n\n";
  if (const std::string job = job_end_line(a.summary); !job.empty()) o += "**Job:** " + markdown_escape(job) + "\n\n";
  o += markdown_escape(report::scope_line(a)) + "\n\n" + markdown_escape(report::untraced_line(a)) + "\n\n";
  if (const std::string line = report::tracer_overhead_line(a); !line.empty()) o += markdown_escape(line) + "\n\n";
  summary(o, a);
  breakdown(o, a);
  ranks(o, a);
  findings(o, a);
  plan(o, a);
  tried(o, a);
  tables(o, a);
  return o + notes(a.notes);
}

std::string to_cross_rank_markdown(const Analysis& a) {
  std::string o = "# gpuscope cluster: " + markdown_escape(a.summary.recording) + "\n\n" +
                  markdown_escape(report::cross_rank_scope_line(a)) + "\n\n";
  ranks(o, a, "In bold: the rank `gpuscope analyze` details by default; savings are a share of its step.");
  findings(o, a, "no cross-rank finding worth reporting");
  return o + notes(a.notes);
}

std::string rules_markdown() {
  std::string o;
  for (const auto& r : rule_docs()) {
    o += "### `" + r.id + "`: " + r.title + "\n\n";
    o += "**Detects.** " + r.detects + "\n\n";
    o += "**Estimated saving.** " + r.saving_model + "\n\n";
    o += markdown_table({{"threshold"}, {"value", kNumber}, {"unit"}, {"meaning"}});
    for (const auto& t : r.thresholds)
      o += markdown_row({"`" + t.name + "`", format_fixed(t.value, t.value == static_cast<int64_t>(t.value) ? 0 : 2), t.unit, t.meaning});
    o += "\n";
  }
  return o;
}

}  // namespace gpuscope::analyzer
