// The HTML report: one self-contained file, inline CSS and SVG, no script and
// no external resource. Every recorded name is escaped.
#include <algorithm>
#include <cstdio>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/report/format.h"
#include "analyzer/report/svg.h"
#include "analyzer/report/tried.h"
#include "report/html.h"

namespace gpuscope::analyzer {
namespace {

using namespace report;
using enum Column::Kind;

// Analyze's own rules after the shared ones: code blocks, the findings'
// details and severities, and the charts of svg.cpp.
const std::string& style() {
  static const std::string s = page_style(1000, "h3{font-size:15px;margin:0}", "code,pre") +
                               R"(pre{background:#f6f8fa;padding:10px;overflow-x:auto;border-radius:4px}.scope{color:#555}.name{word-break:break-all}
details{border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:10px 0}summary{cursor:pointer}
.sev-high{color:#b00020;font-weight:bold}.sev-medium{color:#b36200;font-weight:bold}.sev-low{color:#555}
svg{display:block;margin:8px 0}svg .grid{stroke:#eee}svg .axis{font-size:11px;fill:#555}svg .label{font-size:11px;fill:#222}
svg .series{fill:none;stroke-width:1.5}svg .median{stroke:#e15759;stroke-dasharray:4 3}svg .capacity{stroke:#b00020;stroke-dasharray:6 3}
svg .outlier{fill:#e15759}.note{color:#555})";
  return s;
}

void summary(std::string& o, const Analysis& a) {
  const Summary& s = a.summary;
  o += "<h2>Summary</h2>\n<table>\n";
  auto row = [&](const std::string& k, const std::string& v) { o += "<tr><th>" + k + "</th>" + td(v) + "</tr>\n"; };
  row("wall time", format_fixed(static_cast<double>(s.wall_ns) / 1e9, 3) + " s analysed (recording " +
                       format_fixed(static_cast<double>(s.recording_ns) / 1e9, 3) + " s)");
  row("steps", std::to_string(s.steps) + " (" + html_escape(s.step_source_detail) + ")");
  row("step time", "mean " + ms_unit(s.step_ms_mean) + ", median " + ms_unit(s.step_ms_median) + ", p95 " +
                       ms_unit(s.step_ms_p95) + ", min " + ms_unit(s.step_ms_min) + ", max " + ms_unit(s.step_ms_max));
  if (!s.outlier_steps.empty()) {
    std::string list;
    for (size_t i = 0; i < s.outlier_steps.size() && i < 20; ++i) list += (i ? ", " : "") + std::to_string(s.outlier_steps[i]);
    row("outlier steps", list);
  }
  for (const auto& d : s.devices)
    row("GPU utilization, device " + std::to_string(d.id), format_percent(d.utilization) + (d.name.empty() ? "" : " (" + html_escape(d.name) + ")"));
  if (s.device >= 0) {
    row("SM efficiency (estimated)", format_percent(s.sm_efficiency));
    row("tensor-core share of kernel time", format_percent(s.tensor_core_share));
  }
  row("events", std::to_string(s.kernels) + " kernels, " + std::to_string(s.memcpys) + " memcpy, " + std::to_string(s.memsets) +
                    " memset, " + std::to_string(s.api_calls) + " API calls, " + std::to_string(s.ops) + " ops");
  o += "</table>\n";
}

void breakdown(std::string& o, const Analysis& a) {
  o += "<h2>Step time breakdown</h2>\n<p class=\"note\">Each moment counted once, in this order of priority.</p>\n";
  o += step_breakdown_chart(a.steps);
  const Columns columns{{"category"}, {"ms per step", kNumber}, {"share", kNumber}};
  o += html_table(columns);
  const double n = std::max<double>(1, static_cast<double>(a.summary.steps));
  const double total = static_cast<double>(a.breakdown.total());
  for (int i = 0; i < Breakdown::kCategories; ++i) {
    const double v = static_cast<double>(a.breakdown.get(i));
    o += html_row(columns, {std::string("<span style=\"color:") + category_color(i) + "\">&#9632;</span> " + Breakdown::category(i),
                            format_fixed(v / 1e6 / n, 3), format_percent(total > 0 ? v / total : 0)});
  }
  o += "</table>\n<h2>Step times</h2>\n" + step_time_chart(a.steps, a.summary.step_ms_median);
}

void ranks(std::string& o, const Analysis& a) {
  if (a.ranks.empty()) return;
  o += "<h2>Ranks</h2>\n<p class=\"note\">Mean per step; each moment counted once: waiting in collectives, loading data, "
       "computing, other. The analysed rank is in bold; pick another with <code>--rank N</code>.</p>\n";
  const bool nccl = has_nccl_kernels(a.ranks);
  const Columns columns = rank_columns(nccl);
  o += html_table(columns);
  for (const auto& r : a.ranks) {
    std::vector<std::string> cells = rank_cells(r, nccl);
    if (r.analysed) cells[0] = "<b>" + cells[0] + "</b>";
    cells[1] = html_escape(cells[1]);
    o += html_row(columns, cells);
  }
  o += "</table>\n";
}

void findings(std::string& o, const Analysis& a) {
  o += "<h2>Findings</h2>\n";
  if (a.findings.empty()) {
    o += a.summary.device < 0 ? "<p>None: no GPU activity to analyse.</p>\n" : "<p>None: no rule found a saving worth reporting.</p>\n";
    return;
  }
  int i = 0;
  for (const auto& f : a.findings) {
    const std::string sev = severity_name(f.severity);
    o += "<details open id=\"finding-" + html_escape(f.id) + "\"><summary><h3 style=\"display:inline\">" + std::to_string(++i) +
         ". <code>" + html_escape(f.id) + "</code>: " + html_escape(f.title) + "</h3> <span class=\"sev-" + sev + "\">" + sev +
         "</span>, saves ~" + ms_unit(f.saving_ms_per_step) + " per step (" + format_fixed(f.saving_pct, 1) + " %)</summary>\n";
    if (const std::string p = report::finding_prediction(f); !p.empty()) o += "<p>" + html_escape(p) + "</p>\n";
    o += "<p>" + html_escape(f.evidence.summary) + "</p>\n";
    if (!f.evidence.metrics.empty()) {
      const Columns columns{{"metric"}, {"value", kNumber}};
      o += html_table(columns);
      for (const auto& m : f.evidence.metrics)
        o += html_row(columns, {html_escape(m.name), format_fixed(m.value, 3) + " " + html_escape(m.unit)});
      o += "</table>\n";
    }
    if (!f.evidence.top.empty()) {
      const Columns columns{{"top contributor", kName}, {"ms", kNumber}, {"count", kNumber}, {"detail"}};
      o += html_table(columns);
      for (const auto& c : f.evidence.top)
        o += html_row(columns, {c.name, format_fixed(c.total_ms, 3), std::to_string(c.count), html_escape(c.detail)});
      o += "</table>\n";
    }
    if (!f.evidence.ranges.empty()) {
      o += "<p>Time ranges (from the recording's origin):</p><ul>\n";
      for (const auto& r : f.evidence.ranges)
        o += "<li data-start-ns=\"" + std::to_string(r.start_ns) + "\" data-end-ns=\"" + std::to_string(r.end_ns) + "\">" +
             seconds(r.start_ns) + " to " + seconds(r.end_ns) + ": " + html_escape(r.label) + "</li>\n";
      o += "</ul>\n";
    }
    o += "<p><b>Fix:</b> " + html_escape(f.fix.text) + "</p>\n<pre><code>" + html_escape(f.fix.code) + "</code></pre>\n</details>\n";
  }
}

void plan(std::string& o, const Analysis& a) {
  const std::string check = report::whatif_check_line(a);
  if (check.empty()) return;
  o += "<h2>Plan</h2>\n<p>" + html_escape(check) + "</p>\n" + html_list(report::plan_lines(a));
}

// `gpuscope try --attach`'s measurements beside this analysis's predictions
// (analyzer/report/tried.h); the variant and the reason a run failed are recorded text.
void tried(std::string& o, const Analysis& a) {
  if (a.tried.empty()) return;
  o += "<h2>Tried</h2>\n<p class=\"note\">Measured by <code>gpuscope try</code> on the job (the median of its rounds, "
       "their smallest and largest), beside this analysis's prediction for the same fixes.</p>\n";
  const Columns columns{{"variant", kName},    {"measured", kNumber},  {"rounds", kNumber}, {"p", kNumber},
                        {"predicted", kNumber}, {"replay's range", kNumber}, {"result"}};
  o += html_table(columns);
  const auto range = [](double lo, double hi) {
    char b[64];
    std::snprintf(b, sizeof b, "%+.1f..%+.1f %%", lo, hi);  // as tried_line writes it
    return std::string(b);
  };
  for (const auto& t : a.tried) {
    std::string result;
    if (!t.measured)
      result = html_escape((t.state.empty() ? std::string("not measured") : t.state) + (t.why.empty() ? "" : ": " + t.why));
    else if (t.within_range)
      result = *t.within_range ? "within range" : "<b>outside range</b>";
    else if (!t.predicted_saving_pct)
      result = "not priced by this replay";
    if (t.measured && !t.significant) result += std::string(result.empty() ? "" : ", ") + "not significant";
    o += html_row(columns, {t.variant.empty() ? "?" : t.variant,
                            t.measured ? plus_percent(t.measured_saving_pct, 1) : "-",
                            t.measured ? range(t.measured_low_pct, t.measured_high_pct) : "-",
                            t.measured ? html_escape(p_value(t.p_value)) : "-",
                            t.predicted_saving_pct ? plus_percent(*t.predicted_saving_pct, 1) : "-",
                            t.predicted_saving_pct ? range(*t.predicted_low_pct, *t.predicted_high_pct) : "-", result});
  }
  o += "</table>\n";
}

void idle(std::string& o, const Analysis& a) {
  if (a.summary.device < 0) return;
  const Columns columns{{"cause"}, {"ms per step", kNumber}, {"% of step", kNumber}, {"gaps", kNumber}};
  o += "<h2>GPU idle by cause</h2>\n" + html_table(columns);
  for (const auto& c : a.idle.causes)
    o += html_row(columns, {idle_cause_name(c.cause), format_fixed(c.ms_per_step, 3), format_fixed(c.pct_of_step, 1), std::to_string(c.gaps)});
  o += "</table>\n";
}

void tables(std::string& o, const Analysis& a) {
  if (!a.top_kernels.empty()) {
    o += "<h2>Top kernels</h2>\n" + top_kernels_chart(a.top_kernels);
    const Columns columns{{"kernel", kName}, {"origin"}, {"TC"}, {"count", kNumber}, {"total ms", kNumber}, {"mean us", kNumber},
                          {"min us", kNumber}, {"max us", kNumber}, {"share", kNumber}, {"grid"}, {"block"}};
    o += html_table(columns);
    for (const auto& k : a.top_kernels)
      o += html_row(columns, {k.name, k.origin, k.tensor_core ? "yes" : "no", std::to_string(k.count), ms(k.total_ns),
                              format_fixed(k.mean_ns / 1e3, 1), format_fixed(static_cast<double>(k.min_ns) / 1e3, 1),
                              format_fixed(static_cast<double>(k.max_ns) / 1e3, 1), format_percent(k.share), k.grid, k.block});
    o += "</table>\n";
  }
  if (!a.top_ops.empty()) {
    const Columns columns{{"op", kName}, {"count", kNumber}, {"GPU ms", kNumber}, {"self CPU ms", kNumber}, {"CPU ms", kNumber},
                          {"input shapes"}, {"dtypes"}};
    o += "<h2>Top ops</h2>\n" + html_table(columns);
    for (const auto& p : a.top_ops)
      o += html_row(columns, {p.name, std::to_string(p.count), ms(p.gpu_ns), ms(p.self_cpu_ns), ms(p.cpu_ns),
                              "<code>" + html_escape(p.shapes) + "</code>", html_escape(p.dtypes)});
    o += "</table>\n";
  }
  const MemorySummary& m = a.memory;
  if (m.torch_allocator || m.cuda_events) {
    o += "<h2>Memory</h2>\n" + memory_chart(m) + "<table>\n";
    if (m.torch_allocator)
      o += "<tr><th>peak allocated / reserved</th>" + td(format_bytes(static_cast<double>(m.peak_allocated)) + " / " +
                                                         format_bytes(static_cast<double>(m.peak_reserved))) + "</tr>\n";
    if (m.cuda_events) o += "<tr><th>peak CUDA memory in use</th>" + td(format_bytes(static_cast<double>(m.peak_device_used))) + "</tr>\n";
    if (m.capacity > 0)
      o += "<tr><th>capacity</th>" + td(format_bytes(static_cast<double>(m.capacity)) + " (peak " + format_percent(m.peak_fraction) + ")") + "</tr>\n";
    o += "<tr><th>allocator calls per step</th>" + td(format_fixed(m.allocs_per_step, 1)) + "</tr>\n</table>\n";
  }
  if (!a.copies.empty()) {
    const Columns columns{{"kind"}, {"direction"}, {"from"}, {"to"}, {"count", kNumber}, {"bytes", kNumber}, {"ms", kNumber},
                          {"GB/s", kNumber}};
    o += "<h2>Memory copies and sets</h2>\n" + html_table(columns);
    for (const auto& c : a.copies)
      o += html_row(columns, {c.kind, c.direction, c.src_kind, c.dst_kind, std::to_string(c.count), format_bytes(static_cast<double>(c.bytes)),
                              ms(c.total_ns), format_fixed(c.gb_per_s, 1)});
    o += "</table>\n";
  }
  if (!a.api_calls.empty()) {
    const Columns columns{{"call", kName}, {"count", kNumber}, {"total ms", kNumber}, {"mean us", kNumber}, {"failed", kNumber}};
    o += "<h2>CUDA API calls</h2>\n" + html_table(columns);
    for (const auto& c : a.api_calls)
      o += html_row(columns, {c.name, std::to_string(c.count), ms(c.total_ns), format_fixed(c.mean_ns / 1e3, 1), std::to_string(c.failed)});
    o += "</table>\n";
  }
}

}  // namespace

std::string to_html(const Analysis& a) {
  const std::string title = "gpuscope analysis: " + html_escape(a.summary.recording);
  std::string o = page_start(title, style()) + "<p class=\"scope\">" + html_escape(report::scope_line(a)) + "</p>\n<p>" +
                  html_escape(report::untraced_line(a)) + "</p>\n";
  if (const std::string line = report::tracer_overhead_line(a); !line.empty()) o += "<p>" + html_escape(line) + "</p>\n";
  summary(o, a);
  ranks(o, a);
  findings(o, a);
  plan(o, a);
  tried(o, a);
  breakdown(o, a);
  idle(o, a);
  tables(o, a);
  return o + html_notes(a.notes) + page_end("Report schema " + std::string(kReportSchema) + ".");
}

}  // namespace gpuscope::analyzer
