#include "analyzer/whatif/history.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analyzer/steps.h"
#include "analyzer/untraced.h"
#include "trace_formats/common/text.h"

namespace gpuscope::analyzer::whatif {
namespace {

using nlohmann::json;

bool is_saving(const json& v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() < 100; }

std::optional<TryRecord> parse_line(std::string_view line) {
  const json j = json::parse(line, nullptr, false);
  if (!j.is_object() || !j.contains("gpu") || !j["gpu"].is_string()) return std::nullopt;
  TryRecord t;
  t.gpu = j["gpu"].get<std::string>();
  if (j.contains("fixes") && j["fixes"].is_array() && !j["fixes"].empty()) {
    for (const auto& f : j["fixes"]) {
      if (!f.is_string() || f.get<std::string>().empty()) return std::nullopt;
      t.fixes.push_back(f.get<std::string>());
    }
  } else if (j.contains("fix") && j["fix"].is_string() && !j["fix"].get<std::string>().empty()) {
    const std::string fix = j["fix"].get<std::string>();
    for (size_t from = 0;;) {
      const size_t plus = fix.find('+', from);
      t.fixes.push_back(fix.substr(from, plus - from));
      if (plus == std::string::npos) break;
      from = plus + 1;
    }
  } else {
    return std::nullopt;
  }
  std::sort(t.fixes.begin(), t.fixes.end());
  t.fixes.erase(std::unique(t.fixes.begin(), t.fixes.end()), t.fixes.end());
  if (!j.contains("measured_saving_pct") || !is_saving(j["measured_saving_pct"])) return std::nullopt;
  t.measured_saving_pct = j["measured_saving_pct"].get<double>();
  t.measured_low_pct = t.measured_high_pct = t.measured_saving_pct;
  if (j.contains("measured_range_pct") && !j["measured_range_pct"].is_null()) {
    const json& r = j["measured_range_pct"];
    if (!r.is_array() || r.size() != 2 || !is_saving(r[0]) || !is_saving(r[1])) return std::nullopt;
    t.measured_low_pct = std::min({r[0].get<double>(), r[1].get<double>(), t.measured_saving_pct});
    t.measured_high_pct = std::max({r[0].get<double>(), r[1].get<double>(), t.measured_saving_pct});
  }
  if (j.contains("predicted_saving_pct") && !j["predicted_saving_pct"].is_null()) {
    if (!is_saving(j["predicted_saving_pct"])) return std::nullopt;
    t.predicted_saving_pct = j["predicted_saving_pct"].get<double>();
  }
  return t;
}

// The residual of a try is taken on the step, as a ratio, and in log: the
// replay's errors are ratios (its curves scale kernel times), a ratio carries
// over between jobs whose fix saves 5 % or 50 % (points of saving do not, and
// a ratio of savings blows up near 0), and the log makes a step 10 % longer
// and one 10 % shorter errors of one size and never predicts a step below 0.
double residual(double measured_saving_pct, double predicted_saving_pct) {
  return std::log((1 - measured_saving_pct / 100) / (1 - predicted_saving_pct / 100));
}

struct Correction {
  TriesCorrection c;
  double step_ms = 0, lo_ms = 0, hi_ms = 0;
};

// The tries of this fix set, the latest kMaxTries of them; `job` the job's step.
std::optional<Correction> correct(const std::vector<const TryRecord*>& all, std::vector<std::string> fixes, double step_ms,
                                  double lo_ms, double hi_ms, double job) {
  std::sort(fixes.begin(), fixes.end());
  std::vector<const TryRecord*> same;
  for (const TryRecord* t : all)
    if (t->fixes == fixes && t->predicted_saving_pct) same.push_back(t);
  if (same.empty()) return std::nullopt;
  if (same.size() > kMaxTries) same.erase(same.begin(), same.end() - kMaxTries);
  Correction out;
  out.c.tries = static_cast<int64_t>(same.size());
  out.c.step_ms = step_ms, out.c.lo_ms = lo_ms, out.c.hi_ms = hi_ms;
  out.c.saving_pct = 100 * (1 - step_ms / job);
  out.step_ms = step_ms, out.lo_ms = lo_ms, out.hi_ms = hi_ms;
  std::vector<double> mid;
  double low = INFINITY, high = -INFINITY;
  for (const TryRecord* t : same) {
    mid.push_back(residual(t->measured_saving_pct, *t->predicted_saving_pct));
    // The rounds' largest saving is the shortest step.
    low = std::min(low, residual(t->measured_high_pct, *t->predicted_saving_pct));
    high = std::max(high, residual(t->measured_low_pct, *t->predicted_saving_pct));
  }
  const double m = median(mid);
  out.c.median_residual_pct = 100 * (std::exp(m) - 1);
  if (out.c.tries < kMinTries) return out;
  // n tries' smallest and largest hold the next one with probability
  // (n - 1) / (n + 1) (a half for 3): a small n's spread is widened by its inverse.
  const double n = static_cast<double>(out.c.tries);
  const double widen = (n + 1) / (n - 1);
  out.c.corrected = true;
  out.step_ms = step_ms * std::exp(m);
  out.lo_ms = step_ms * std::exp(m + widen * std::min(0.0, low - m));
  out.hi_ms = step_ms * std::exp(m + widen * std::max(0.0, high - m));
  return out;
}

}  // namespace

TryHistory parse_try_history(std::string_view text, std::string file) {
  TryHistory h;
  h.file = std::move(file);
  for (size_t from = 0; from < text.size();) {
    size_t end = text.find('\n', from);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(from, end - from);
    from = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (auto t = parse_line(line)) h.tries.push_back(std::move(*t));
    else ++h.damaged_lines;
  }
  return h;
}

void correct_by_tries(Analysis& a, const TryHistory& history, std::string_view gpu) {
  WhatIf& w = a.whatif;
  if (!w.available || gpu.empty() || w.job_step_ms <= 0) return;
  std::vector<const TryRecord*> here;
  for (const TryRecord& t : history.tries)
    if (t.gpu == gpu) here.push_back(&t);
  if (here.empty()) return;
  w.history.file = history.file;
  w.history.gpu = std::string(gpu);
  w.history.tries = static_cast<int64_t>(here.size());
  w.history.damaged_lines = history.damaged_lines;
  const double job = w.job_step_ms;
  auto apply = [&](auto& entry, const std::vector<std::string>& fixes) {
    auto c = correct(here, fixes, entry.step_ms, entry.lo_ms, entry.hi_ms, job);
    if (!c) return false;
    entry.by_tries = c->c;
    entry.step_ms = c->step_ms, entry.lo_ms = c->lo_ms, entry.hi_ms = c->hi_ms;
    entry.saving_pct = 100 * (1 - c->step_ms / job);
    return c->c.corrected;
  };
  for (FixPrediction& p : w.fixes) {
    if (!p.applies || !apply(p, {p.fix})) continue;
    // A finding that took this fix's prediction takes the corrected one.
    for (Finding& f : a.findings) {
      if (f.fix_id != p.fix || f.predicted_step_ms <= 0) continue;
      f.predicted_step_ms = p.step_ms;
      f.saving_ms_per_step = job - p.step_ms;
      f.saving_pct = 100 * f.saving_ms_per_step / job;
      f.saving_lo_pct = 100 * (1 - p.hi_ms / job);
      f.saving_hi_pct = 100 * (1 - p.lo_ms / job);
      f.severity = severity_of(f.saving_pct, f.id);
      for (auto& metric : f.evidence.metrics)
        if (metric.name == "predicted_step_ms") metric.value = p.step_ms;
      f.evidence.summary += " Calibrated by " + std::to_string(p.by_tries->tries) + " tries on this machine (" +
                            w.history.gpu + "): " + format_fixed(p.step_ms, 2) + " ms (" + format_fixed(p.lo_ms, 2) +
                            "-" + format_fixed(p.hi_ms, 2) + ").";
    }
  }
  for (PlanStep& p : w.plan) apply(p, p.fixes);
  for (WhatIf::Asked& q : w.asked)
    if (q.skipped.empty()) apply(q, q.fixes);
  rank_findings(a.findings);
}

}  // namespace gpuscope::analyzer::whatif
