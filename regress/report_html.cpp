// The HTML diff report: one self-contained file like the analyzer's (inline
// CSS and SVG, no script, nothing fetched), every recorded name escaped.
#include <algorithm>
#include <cmath>

#include "regress/diff.h"
#include "regress/report_util.h"
#include "report/format.h"
#include "report/html.h"
#include "report/svg.h"

namespace gpuscope::regress {
namespace {

using namespace gpuscope::report;
using enum Column::Kind;

constexpr size_t kTableRows = 50;

// Diff's own rules after the shared ones: the verdict box, marked rows,
// up and down changes, and the step-time strip plot.
const std::string& style() {
  static const std::string s = page_style(1100, "", "code") +
                               R"(.name{word-break:break-all}.note{color:#555}.verdict{padding:10px 14px;border-radius:6px;font-size:16px;margin:12px 0}
.regression{background:#fde8e8;border:1px solid #b00020}.pass{background:#e8f5e9;border:1px solid #2e7d32}
tr.sig td:first-child{border-left:3px solid #b36200}.up{color:#b00020}.down{color:#2e7d32}
svg{display:block;margin:8px 0}svg .axis{font-size:11px;fill:#555}svg .grid{stroke:#eee}svg .base{fill:#4e79a7}svg .new{fill:#e15759}
svg .median{stroke:#222;stroke-width:2}svg .label{font-size:12px;fill:#222})";
  return s;
}

std::string delta_td(double v, const std::string& text) {
  return std::string("<td class=\"n ") + (v > 0 ? "up" : v < 0 ? "down" : "") + "\">" + text + "</td>";
}

// Every step of both runs as a dot on one time axis, with each run's median.
std::string strip_plot(const DiffResult& d) {
  const Frame f{960, 150, 60, 20, 10, 30};
  double lo = 1e300, hi = -1e300;
  for (const auto* s : {&d.base, &d.next})
    for (double v : s->step_ms) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > lo)) hi = lo + 1, lo = std::max(0.0, lo - 1);
  const double pad = (hi - lo) * 0.05;
  lo -= pad, hi += pad;
  auto x = [&](double v) { return x_at(f, lo, hi, v); };
  std::string o = svg_open(f, "step times", false) + x_axis(f, lo, hi, "ms");
  const double rows[2] = {40, 90};
  int row = 0;
  for (const auto* s : {&d.base, &d.next}) {
    const double y = rows[row];
    const char* cls = row == 0 ? "base" : "new";
    o += std::string("<text class=\"label\" x=\"4\" y=\"") + format_fixed(y + 4, 0) + "\">" + (row == 0 ? "base" : "new") + "</text>\n";
    size_t i = 0;
    for (double v : s->step_ms) {
      // A small vertical jitter by index keeps equal steps visible without randomness.
      const double jy = y + static_cast<double>(static_cast<int>(i++ % 7) - 3) * 3.0;
      o += std::string("<circle class=\"") + cls + "\" cx=\"" + format_fixed(x(v), 1) + "\" cy=\"" + format_fixed(jy, 1) +
           "\" r=\"3\" fill-opacity=\"0.6\"/>";
    }
    const double mx = x(s->median_ms);
    o += "\n<line class=\"median\" x1=\"" + format_fixed(mx, 1) + "\" y1=\"" + format_fixed(y - 16, 0) + "\" x2=\"" + format_fixed(mx, 1) +
         "\" y2=\"" + format_fixed(y + 16, 0) + "\"/>\n";
    ++row;
  }
  return o + "</svg>\n";
}

void change_rows(std::string& o, const std::vector<Change>& list, bool kind_column) {
  Columns columns{{"#", kNumber}};
  if (kind_column) columns.push_back({"kind"});
  columns.insert(columns.end(), {{"name", kName}, {"status"}, {"base ms", kNumber}, {"new ms", kNumber},
                                 {"&Delta; ms", kNumber}, {"&Delta; %", kNumber}, {"share of change", kNumber},
                                 {"count base &rarr; new", kNumber}, {"p", kNumber}});
  o += html_table(columns);
  size_t i = 0;
  for (const Change& c : list) {
    if (i == kTableRows) break;
    o += std::string("<tr") + (c.significant ? " class=\"sig\"" : "") + ">" + td(std::to_string(++i), true) +
         (kind_column ? td(c.kind) : "") + name_td(c.name) + td(status_name(c.status)) + td(side_ms(c, false), true) +
         td(side_ms(c, true), true) + delta_td(c.delta_ms, signed_fixed(c.delta_ms, 3)) +
         td(optional_percent(c.delta_pct), true) + td(share_text(c), true) +
         td(metric(c.base_count, "count") + " &rarr; " + metric(c.new_count, "count"), true) +
         td(html_escape(p_text(c)), true) + "</tr>\n";
  }
  o += "</table>\n";
  if (list.size() > kTableRows)
    o += "<p class=\"note\">" + std::to_string(list.size() - kTableRows) + " more in the JSON report.</p>\n";
}

}  // namespace

std::string to_html(const DiffResult& d) {
  const std::string title = "gpuscope diff: " + html_escape(d.next.recording) + " vs " + html_escape(d.base.recording);
  std::string o = page_start(title, style());
  o += std::string("<div class=\"verdict ") + (d.verdict == Verdict::kRegression ? "regression" : "pass") + "\"><b>" +
       html_escape(d.headline) + "</b></div>\n";
  if (!d.causes.empty()) {
    o += "<p>Behind it:</p><ul>\n";
    for (const Cause& c : d.causes)
      o += "<li>" + cause_subject(c, "<code class=\"name\">" + html_escape(c.name) + "</code>") + " " +
           signed_fixed(c.delta_ms, 3) + " ms per step (" + format_fixed(c.share * 100, 0) + " % of the change)</li>\n";
    o += "</ul>\n";
  }

  o += "<h2>Step time</h2>\n" + strip_plot(d);
  o += html_table({{""}, {"base", kNumber}, {"new", kNumber}, {"change", kNumber}});
  o += "<tr><th>recording</th>" + name_td(d.base.recording) + name_td(d.next.recording) + td("") + "</tr>\n";
  o += "<tr><th>steps analysed</th>" + td(std::to_string(d.base.steps), true) + td(std::to_string(d.next.steps), true) + td("") + "</tr>\n";
  o += "<tr><th>steps from</th>" + td(html_escape(d.base.step_source)) + td(html_escape(d.next.step_source)) + td("") + "</tr>\n";
  if (!d.base.device_name.empty() || !d.next.device_name.empty())
    o += "<tr><th>GPU</th>" + td(html_escape(d.base.device_name)) + td(html_escape(d.next.device_name)) + td("") + "</tr>\n";
  for (const auto& m : d.metrics)
    o += "<tr><th>" + html_escape(m.name) + "</th>" + td(metric(m.base, m.unit), true) + td(metric(m.next, m.unit), true) +
         delta_td(m.next - m.base, metric_change(m)) + "</tr>\n";
  o += "<tr><th>shift estimate (95 % CI)</th>" + td("") + td("") +
       delta_td(d.test.shift, signed_percent(d.test.shift) + " (" + signed_percent(d.test.ci_low) + " to " +
                                  signed_percent(d.test.ci_high) + ")") + "</tr>\n";
  o += "<tr><th>Mann-Whitney p (slower / faster)</th>" + td("") + td("") +
       td(html_escape(p_value(d.test.p_slower) + " / " + p_value(d.test.p_faster)), true) + "</tr>\n</table>\n";

  o += "<h2>Top changes, time per step</h2>\n";
  if (d.top.empty()) o += "<p>No kernel, op or copy changed its time per step by more than 1 %.</p>\n";
  else change_rows(o, d.top, true);
  o += "<p class=\"note\">Ops count their kernels' GPU time plus their own CPU time. A marked row changed beyond its own "
       "step-to-step noise (two-sided Mann-Whitney over per-step kernel time, p &lt; alpha).</p>\n";
  if (!d.kernels.empty()) {
    o += "<h2>Kernels</h2>\n";
    change_rows(o, d.kernels, false);
  }
  if (!d.ops.empty()) {
    o += "<h2>Ops</h2>\n";
    change_rows(o, d.ops, false);
  }
  if (!d.findings.empty()) {
    const Columns columns{{"status"}, {"rule"}, {"title"}, {"base saving", kNumber}, {"new saving", kNumber}};
    o += "<h2>Findings</h2>\n" + html_table(columns);
    for (const auto& f : d.findings)
      o += html_row(columns, {f.status, "<code>" + html_escape(f.id) + "</code>", html_escape(f.title),
                              f.base_saving_pct ? format_fixed(*f.base_saving_pct, 1) + " %" : "-",
                              f.new_saving_pct ? format_fixed(*f.new_saving_pct, 1) + " %" : "-"});
    o += "</table>\n";
  }
  if (!d.copies.empty()) {
    const Columns columns{{"kind"}, {"base bytes", kNumber}, {"new bytes", kNumber}, {"base ms", kNumber}, {"new ms", kNumber},
                          {"count base &rarr; new", kNumber}};
    o += "<h2>Memory copies and sets, per step</h2>\n" + html_table(columns);
    for (const auto& c : d.copies)
      o += html_row(columns, {html_escape(c.label), format_bytes(c.base_bytes), format_bytes(c.new_bytes), format_fixed(c.base_ms, 3),
                              format_fixed(c.new_ms, 3), metric(c.base_count, "count") + " &rarr; " + metric(c.new_count, "count")});
    o += "</table>\n";
  }
  o += "<h2>Step time breakdown, ms per step</h2>\n" + html_table({{"category"}, {"base", kNumber}, {"new", kNumber},
                                                                   {"&Delta;", kNumber}});
  for (const auto& b : d.breakdown)
    o += "<tr>" + td(b.name) + td(format_fixed(b.base, 3), true) + td(format_fixed(b.next, 3), true) +
         delta_td(b.next - b.base, signed_fixed(b.next - b.base, 3)) + "</tr>\n";
  o += "</table>\n";
  return o + html_notes(d.notes) +
         page_end("Threshold " + format_percent(d.options.threshold) + ", alpha " + format_fixed(d.options.alpha, 3) +
                  "; one-sided Mann-Whitney U over steps with the Hodges-Lehmann shift. Report schema " + kDiffSchema + ".");
}

}  // namespace gpuscope::regress
