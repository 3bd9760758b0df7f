// The terminal reports of diff and check: verdict first, then what changed.
#include <algorithm>

#include "regress/diff.h"
#include "regress/report_util.h"
#include "report/format.h"

namespace gpuscope::regress {
namespace {

using namespace gpuscope::report;

std::string side_line(const char* which, const SideSummary& s) {
  return std::string("  ") + which + " " + plain_text(s.recording, 60) + ": " + std::to_string(s.steps) + " steps, median " +
         duration(s.median_ms) + ", p95 " + duration(s.p95_ms) + " (" + plain_text(s.step_source, 80) +
         (s.device_name.empty() ? "" : ", " + plain_text(s.device_name, 60)) + ")\n";
}

}  // namespace

std::string to_text(const DiffResult& d) {
  std::string o = std::string("gpuscope diff: ") + verdict_label(d.verdict) + "\n" + d.headline + "\n";
  o += side_line("base", d.base);
  o += side_line("new ", d.next);
  o += "  shift " + signed_percent(d.test.shift) + " (95 % CI " + signed_percent(d.test.ci_low) + " to " +
       signed_percent(d.test.ci_high) + "), Mann-Whitney over steps: p(slower) " + p_is(d.test.p_slower) +
       ", p(faster) " + p_is(d.test.p_faster) + "; threshold " + format_percent(d.options.threshold) + ", alpha " +
       format_fixed(d.options.alpha, 3) + "\n";
  for (const Cause& c : d.causes)
    o += "  behind it: " + cause_subject(c, plain_text(c.name, 120)) + " " + signed_fixed(c.delta_ms, 3) +
         " ms per step (" + format_fixed(c.share * 100, 0) + " % of the change)\n";

  if (!d.top.empty()) {
    o += "\nTop changes, ms per step:\n";
    o += lpad("#", 4) + " " + pad("kind", 6) + " " + pad("status", 10) + lpad("base", 11) + lpad("new", 11) +
         lpad("delta", 11) + lpad("share", 7) + "  " + pad("p", 8) + " name\n";
    int i = 0;
    for (const Change& c : d.top)
      o += lpad(std::to_string(++i), 4) + " " + pad(c.kind, 6) + " " + pad(status_name(c.status), 10) +
           lpad(side_ms(c, false), 11) + lpad(side_ms(c, true), 11) + lpad(signed_fixed(c.delta_ms, 3), 11) +
           lpad(share_text(c), 7) + "  " + pad(p_text(c), 8) + " " + plain_text(c.name, 100) + "\n";
  }
  o += "\nOther measures (base -> new):\n";
  for (const auto& m : d.metrics)
    o += "  " + pad(m.name, 30) + metric(m.base, m.unit) + " -> " + metric(m.next, m.unit) +
         (metric_change(m).empty() ? "" : " (" + metric_change(m) + ")") + "\n";
  for (const auto& c : d.copies)
    o += "  " + pad(c.label, 29) + " " + format_bytes(c.base_bytes) + " -> " + format_bytes(c.new_bytes) + " per step, " +
         format_fixed(c.base_ms, 3) + " -> " + format_fixed(c.new_ms, 3) + " ms\n";
  if (!d.findings.empty()) {
    o += "\nFindings:\n";
    for (const auto& f : d.findings)
      o += "  " + pad(f.status, 9) + " " + f.id + ": " + plain_text(f.title, 100) +
           (f.new_saving_pct ? " (new: " + format_fixed(*f.new_saving_pct, 1) + " % of step)" : "") +
           (f.base_saving_pct ? " (base: " + format_fixed(*f.base_saving_pct, 1) + " % of step)" : "") + "\n";
  }
  if (!d.notes.empty()) {
    o += "\nNotes:\n" + text_list(d.notes);
  }
  return o;
}

std::string to_text(const CheckResult& c) {
  std::string o = std::string("gpuscope check: ") + (c.pass() ? "PASS" : "FAIL") + " (" + plain_text(c.recording, 60) +
                  " against " + plain_text(c.budget, 60) + ", " + std::to_string(c.run.steps) + " steps, median " +
                  duration(c.run.median_ms) + ")\n";
  for (const auto& k : c.checks)
    o += std::string("  ") + (k.pass ? "pass " : "FAIL ") + pad(k.name, 30) + " limit " + pad(k.limit, 12) + " actual " +
         pad(k.actual, 12) + " " + plain_text(k.detail, 200) + "\n";
  for (const auto& n : c.notes) o += "  note: " + plain_text(n) + "\n";
  return o;
}

}  // namespace gpuscope::regress
