// The JSON reports (docs/ci.md): fixed key order, ms per step rounded to the
// nanosecond, fractions to 6 decimals, p-values to 4 significant digits.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "regress/diff.h"
#include "report/json.h"
#include "trace_formats/common/text.h"

namespace gpuscope::regress {
namespace {

using json = nlohmann::ordered_json;

double ms(double v) { return round_to(v, 6); }
double frac(double v) { return round_to(v, 6); }
double pct(double fraction) { return round_to(fraction * 100, 4); }

double significant(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::strtod(buf, nullptr);
}

json optional_pct(const std::optional<double>& f) { return f ? json(pct(*f)) : json(nullptr); }

json side(const SideSummary& s) {
  json j;
  j["recording"] = valid_utf8(s.recording);
  j["device"] = valid_utf8(s.device_name);
  j["step_source"] = valid_utf8(s.step_source);
  j["steps"] = s.steps;
  j["warmup_skipped"] = s.warmup_skipped;
  j["step_ms_median"] = ms(s.median_ms);
  j["step_ms_p95"] = ms(s.p95_ms);
  j["step_ms_mean"] = ms(s.mean_ms);
  j["step_ms_min"] = ms(s.min_ms);
  j["step_ms_max"] = ms(s.max_ms);
  j["outlier_steps"] = s.outliers;
  json steps = json::array();
  for (double v : s.step_ms) steps.push_back(ms(v));
  j["step_ms"] = steps;
  return j;
}

json change(const Change& c) {
  json j;
  j["kind"] = c.kind;
  j["name"] = valid_utf8(c.name);
  if (c.kind == "kernel") j["origin"] = c.origin;
  j["status"] = status_name(c.status);
  j["base_ms_per_step"] = ms(c.base_ms);
  j["new_ms_per_step"] = ms(c.new_ms);
  j["delta_ms_per_step"] = ms(c.delta_ms);
  j["delta_pct"] = optional_pct(c.delta_pct);
  j["share_of_change"] = c.share ? json(frac(*c.share)) : json(nullptr);
  j["base_count_per_step"] = round_to(c.base_count, 4);
  j["new_count_per_step"] = round_to(c.new_count, 4);
  if (c.kind == "op") {
    j["base_gpu_ms_per_step"] = ms(c.base_gpu_ms);
    j["new_gpu_ms_per_step"] = ms(c.new_gpu_ms);
    j["base_self_cpu_ms_per_step"] = ms(c.base_cpu_ms);
    j["new_self_cpu_ms_per_step"] = ms(c.new_cpu_ms);
  }
  j["p_value"] = c.p_value ? json(significant(*c.p_value)) : json(nullptr);
  j["significant"] = c.significant;
  return j;
}

json changes(const std::vector<Change>& list) {
  json a = json::array();
  for (const auto& c : list) a.push_back(change(c));
  return a;
}

}  // namespace

std::string to_json(const DiffResult& d) {
  json j;
  j["schema"] = kDiffSchema;
  j["verdict"] = verdict_name(d.verdict);
  j["exit_code"] = d.exit_code();
  j["headline"] = valid_utf8(d.headline);
  j["threshold_pct"] = pct(d.options.threshold);
  j["alpha"] = d.options.alpha;
  j["base"] = side(d.base);
  j["new"] = side(d.next);
  json t;
  t["test"] = "mann-whitney-u";
  t["p_slower"] = significant(d.test.p_slower);
  t["p_faster"] = significant(d.test.p_faster);
  t["shift_pct"] = pct(d.test.shift);
  t["shift_ci95_pct"] = json::array({pct(d.test.ci_low), pct(d.test.ci_high)});
  t["median_change_pct"] = pct(d.median_change);
  t["p95_change_pct"] = pct(d.p95_change);
  t["median_delta_ms"] = ms(d.next.median_ms - d.base.median_ms);
  j["step_time"] = t;
  json causes = json::array();
  for (const auto& c : d.causes)
    causes.push_back(json{{"kind", c.kind}, {"name", valid_utf8(c.name)}, {"delta_ms_per_step", ms(c.delta_ms)},
                          {"share_of_change", frac(c.share)}});
  j["causes"] = causes;
  j["top_changes"] = changes(d.top);
  j["kernels"] = changes(d.kernels);
  j["ops"] = changes(d.ops);
  json copies = json::array();
  for (const auto& c : d.copies) {
    json x;
    x["kind"] = c.label;
    x["base_bytes_per_step"] = round_to(c.base_bytes, 1);
    x["new_bytes_per_step"] = round_to(c.new_bytes, 1);
    x["base_ms_per_step"] = ms(c.base_ms);
    x["new_ms_per_step"] = ms(c.new_ms);
    x["base_count_per_step"] = round_to(c.base_count, 4);
    x["new_count_per_step"] = round_to(c.new_count, 4);
    copies.push_back(x);
  }
  j["copies"] = copies;
  json metrics = json::array();
  for (const auto& m : d.metrics) {
    json x;
    x["name"] = m.name;
    x["unit"] = m.unit;
    x["base"] = m.unit == "bytes" ? round_to(m.base, 0) : round_to(m.base, 6);
    x["new"] = m.unit == "bytes" ? round_to(m.next, 0) : round_to(m.next, 6);
    x["change_pct"] = m.base != 0 ? json(pct(m.next / m.base - 1)) : json(nullptr);
    metrics.push_back(x);
  }
  j["metrics"] = metrics;
  json breakdown = json::array();
  for (const auto& b : d.breakdown)
    breakdown.push_back(json{{"category", b.name}, {"base_ms_per_step", ms(b.base)}, {"new_ms_per_step", ms(b.next)},
                             {"delta_ms_per_step", ms(b.next - b.base)}});
  j["breakdown"] = breakdown;
  json findings = json::array();
  for (const auto& f : d.findings) {
    json x;
    x["id"] = f.id;
    x["title"] = valid_utf8(f.title);
    x["status"] = f.status;
    x["severity"] = f.severity;
    x["base_saving_pct"] = f.base_saving_pct ? json(round_to(*f.base_saving_pct, 4)) : json(nullptr);
    x["new_saving_pct"] = f.new_saving_pct ? json(round_to(*f.new_saving_pct, 4)) : json(nullptr);
    findings.push_back(x);
  }
  j["findings"] = findings;
  json notes = json::array();
  for (const auto& n : d.notes) notes.push_back(valid_utf8(n));
  j["notes"] = notes;
  return report::json_text(j);
}

std::string to_json(const CheckResult& c) {
  json j;
  j["schema"] = kCheckSchema;
  j["pass"] = c.pass();
  j["exit_code"] = c.exit_code();
  j["recording"] = valid_utf8(c.recording);
  j["budget"] = valid_utf8(c.budget);
  j["steps"] = c.run.steps;
  j["step_ms_median"] = ms(c.run.median_ms);
  j["step_ms_p95"] = ms(c.run.p95_ms);
  json checks = json::array();
  for (const auto& k : c.checks)
    checks.push_back(json{{"name", k.name}, {"limit", k.limit}, {"actual", k.actual},
                          {"limit_value", round_to(k.limit_value, 6)}, {"actual_value", round_to(k.actual_value, 6)},
                          {"pass", k.pass}, {"detail", valid_utf8(k.detail)}});
  j["checks"] = checks;
  json notes = json::array();
  for (const auto& n : c.notes) notes.push_back(valid_utf8(n));
  j["notes"] = notes;
  return report::json_text(j);
}

}  // namespace gpuscope::regress
