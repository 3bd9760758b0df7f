// The HTML diff report: one self-contained file like the analyzer's (inline
// CSS and SVG, no script, nothing fetched), every recorded name escaped.
#include <algorithm>
#include <cmath>

#include "regress/diff.h"
#include "regress/report_util.h"
#include "regress/text_format.h"

namespace gpuscope::regress {
namespace {

using namespace report;

constexpr size_t kTableRows = 50;

constexpr const char* kStyle = R"(body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 12px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
.name{word-break:break-all}.note{color:#555}.verdict{padding:10px 14px;border-radius:6px;font-size:16px;margin:12px 0}
.regression{background:#fde8e8;border:1px solid #b00020}.pass{background:#e8f5e9;border:1px solid #2e7d32}
tr.sig td:first-child{border-left:3px solid #b36200}.up{color:#b00020}.down{color:#2e7d32}
svg{display:block;margin:8px 0}svg .axis{font-size:11px;fill:#555}svg .grid{stroke:#eee}svg .base{fill:#4e79a7}svg .new{fill:#e15759}
svg .median{stroke:#222;stroke-width:2}svg .label{font-size:12px;fill:#222})";

std::string td(const std::string& s, bool numeric = false) { return std::string(numeric ? "<td class=\"n\">" : "<td>") + s + "</td>"; }
std::string name_td(const std::string& s) { return "<td class=\"name\"><code>" + html_escape(s) + "</code></td>"; }
std::string delta_td(double v, const std::string& text) {
  return std::string("<td class=\"n ") + (v > 0 ? "up" : v < 0 ? "down" : "") + "\">" + text + "</td>";
}

// Every step of both runs as a dot on one time axis, with each run's median.
std::string strip_plot(const DiffResult& d) {
  const double w = 960, h = 150, left = 60, right = 20;
  double lo = 1e300, hi = -1e300;
  for (const auto* s : {&d.base, &d.next})
    for (double v : s->step_ms) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(hi > lo)) hi = lo + 1, lo = std::max(0.0, lo - 1);
  const double pad = (hi - lo) * 0.05;
  lo -= pad, hi += pad;
  auto x = [&](double v) { return left + (v - lo) / (hi - lo) * (w - left - right); };
  std::string o = "<svg width=\"" + format_fixed(w, 0) + "\" height=\"" + format_fixed(h, 0) + "\" role=\"img\" aria-label=\"step times\">\n";
  for (int i = 0; i <= 5; ++i) {
    const double v = lo + (hi - lo) * i / 5.0, px = x(v);
    o += "<line class=\"grid\" x1=\"" + format_fixed(px, 1) + "\" y1=\"10\" x2=\"" + format_fixed(px, 1) + "\" y2=\"120\"/>";
    o += "<text class=\"axis\" x=\"" + format_fixed(px, 1) + "\" y=\"138\" text-anchor=\"middle\">" + format_fixed(v, 2) + " ms</text>\n";
  }
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
  o += "<table><tr><th class=\"n\">#</th>" + std::string(kind_column ? "<th>kind</th>" : "") +
       "<th>name</th><th>status</th><th class=\"n\">base ms</th><th class=\"n\">new ms</th><th class=\"n\">&Delta; ms</th>"
       "<th class=\"n\">&Delta; %</th><th class=\"n\">share of change</th><th class=\"n\">count base &rarr; new</th>"
       "<th class=\"n\">p</th></tr>\n";
  size_t i = 0;
  for (const Change& c : list) {
    if (i == kTableRows) break;
    o += std::string("<tr") + (c.significant ? " class=\"sig\"" : "") + ">" + td(std::to_string(++i), true) +
         (kind_column ? td(c.kind) : "") + name_td(c.name) + td(status_name(c.status)) + td(side_ms(c, false), true) +
         td(side_ms(c, true), true) + delta_td(c.delta_ms, fmt::signed_fixed(c.delta_ms, 3)) +
         td(fmt::optional_percent(c.delta_pct), true) + td(share_text(c), true) +
         td(fmt::metric(c.base_count, "count") + " &rarr; " + fmt::metric(c.new_count, "count"), true) +
         td(html_escape(p_text(c)), true) + "</tr>\n";
  }
  o += "</table>\n";
  if (list.size() > kTableRows)
    o += "<p class=\"note\">" + std::to_string(list.size() - kTableRows) + " more in the JSON report.</p>\n";
}

}  // namespace

std::string to_html(const DiffResult& d) {
  const std::string title = "gpuscope diff: " + html_escape(d.next.recording) + " vs " + html_escape(d.base.recording);
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title + "</title>\n<style>\n" +
                  kStyle + "\n</style>\n</head>\n<body>\n<h1>" + title + "</h1>\n";
  o += std::string("<div class=\"verdict ") + (d.verdict == Verdict::kRegression ? "regression" : "pass") + "\"><b>" +
       html_escape(d.headline) + "</b></div>\n";
  if (!d.causes.empty()) {
    o += "<p>Behind it:</p><ul>\n";
    for (const Cause& c : d.causes)
      o += "<li>" + cause_subject(c, "<code class=\"name\">" + html_escape(c.name) + "</code>") + " " +
           fmt::signed_fixed(c.delta_ms, 3) + " ms per step (" + format_fixed(c.share * 100, 0) + " % of the change)</li>\n";
    o += "</ul>\n";
  }

  o += "<h2>Step time</h2>\n" + strip_plot(d);
  o += "<table><tr><th></th><th class=\"n\">base</th><th class=\"n\">new</th><th class=\"n\">change</th></tr>\n";
  o += "<tr><th>recording</th>" + name_td(d.base.recording) + name_td(d.next.recording) + td("") + "</tr>\n";
  o += "<tr><th>steps analysed</th>" + td(std::to_string(d.base.steps), true) + td(std::to_string(d.next.steps), true) + td("") + "</tr>\n";
  o += "<tr><th>steps from</th>" + td(html_escape(d.base.step_source)) + td(html_escape(d.next.step_source)) + td("") + "</tr>\n";
  if (!d.base.device_name.empty() || !d.next.device_name.empty())
    o += "<tr><th>GPU</th>" + td(html_escape(d.base.device_name)) + td(html_escape(d.next.device_name)) + td("") + "</tr>\n";
  for (const auto& m : d.metrics)
    o += "<tr><th>" + html_escape(m.name) + "</th>" + td(fmt::metric(m.base, m.unit), true) + td(fmt::metric(m.next, m.unit), true) +
         delta_td(m.next - m.base, metric_change(m)) + "</tr>\n";
  o += "<tr><th>shift estimate (95 % CI)</th>" + td("") + td("") +
       delta_td(d.test.shift, fmt::signed_percent(d.test.shift) + " (" + fmt::signed_percent(d.test.ci_low) + " to " +
                                  fmt::signed_percent(d.test.ci_high) + ")") + "</tr>\n";
  o += "<tr><th>Mann-Whitney p (slower / faster)</th>" + td("") + td("") +
       td(html_escape(fmt::p_value(d.test.p_slower) + " / " + fmt::p_value(d.test.p_faster)), true) + "</tr>\n</table>\n";

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
    o += "<h2>Findings</h2>\n<table><tr><th>status</th><th>rule</th><th>title</th><th class=\"n\">base saving</th>"
         "<th class=\"n\">new saving</th></tr>\n";
    for (const auto& f : d.findings)
      o += "<tr>" + td(f.status) + td("<code>" + html_escape(f.id) + "</code>") + td(html_escape(f.title)) +
           td(f.base_saving_pct ? format_fixed(*f.base_saving_pct, 1) + " %" : "-", true) +
           td(f.new_saving_pct ? format_fixed(*f.new_saving_pct, 1) + " %" : "-", true) + "</tr>\n";
    o += "</table>\n";
  }
  if (!d.copies.empty()) {
    o += "<h2>Memory copies and sets, per step</h2>\n<table><tr><th>kind</th><th class=\"n\">base bytes</th><th class=\"n\">new bytes</th>"
         "<th class=\"n\">base ms</th><th class=\"n\">new ms</th><th class=\"n\">count base &rarr; new</th></tr>\n";
    for (const auto& c : d.copies)
      o += "<tr>" + td(html_escape(c.label)) + td(format_bytes(c.base_bytes), true) + td(format_bytes(c.new_bytes), true) +
           td(format_fixed(c.base_ms, 3), true) + td(format_fixed(c.new_ms, 3), true) +
           td(fmt::metric(c.base_count, "count") + " &rarr; " + fmt::metric(c.new_count, "count"), true) + "</tr>\n";
    o += "</table>\n";
  }
  o += "<h2>Step time breakdown, ms per step</h2>\n<table><tr><th>category</th><th class=\"n\">base</th><th class=\"n\">new</th>"
       "<th class=\"n\">&Delta;</th></tr>\n";
  for (const auto& b : d.breakdown)
    o += "<tr>" + td(b.name) + td(format_fixed(b.base, 3), true) + td(format_fixed(b.next, 3), true) +
         delta_td(b.next - b.base, fmt::signed_fixed(b.next - b.base, 3)) + "</tr>\n";
  o += "</table>\n";
  if (!d.notes.empty()) {
    o += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : d.notes) o += "<li>" + html_escape(n) + "</li>\n";
    o += "</ul>\n";
  }
  o += "<p class=\"note\">Threshold " + format_percent(d.options.threshold) + ", alpha " + format_fixed(d.options.alpha, 3) +
       "; one-sided Mann-Whitney U over steps with the Hodges-Lehmann shift. Report schema " + kDiffSchema + ".</p>\n</body>\n</html>\n";
  return o;
}

}  // namespace gpuscope::regress
