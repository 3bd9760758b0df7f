#include "analyzer/report/tried.h"

#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

namespace gpuscope::analyzer {
namespace {

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

void predicted_from(TriedFix& t, double saving, double lo_ms, double hi_ms, double job_ms) {
  t.predicted_saving_pct = saving;
  t.predicted_low_pct = job_ms > 0 ? 100.0 * (1.0 - hi_ms / job_ms) : saving;
  t.predicted_high_pct = job_ms > 0 ? 100.0 * (1.0 - lo_ms / job_ms) : saving;
}

// The replay's price of exactly these fixes: the fix alone, a plan entry, an asked combination.
void predict(TriedFix& t, const WhatIf& w) {
  if (!w.available) return;
  const auto want = as_set(t.fixes);
  if (t.fixes.size() == 1)
    for (const auto& f : w.fixes)
      if (f.fix == t.fixes[0] && f.applies) return predicted_from(t, f.saving_pct, f.lo_ms, f.hi_ms, w.job_step_ms);
  for (const auto& p : w.plan)
    if (as_set(p.fixes) == want) return predicted_from(t, p.saving_pct, p.lo_ms, p.hi_ms, w.job_step_ms);
  for (const auto& q : w.asked)
    if (as_set(q.fixes) == want && q.skipped.empty())
      return predicted_from(t, q.saving_pct, q.lo_ms, q.hi_ms, w.job_step_ms);
}

std::string signed1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f", v);
  return b;
}

}  // namespace

std::vector<TriedFix> tried_fixes(std::string_view try_json, const WhatIf& whatif) {
  std::vector<TriedFix> out;
  if (try_json.empty()) return out;
  const nlohmann::json doc = nlohmann::json::parse(try_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("variants") || !doc["variants"].is_array()) {
    TriedFix t;
    t.state = "unreadable";
    t.why = "meta try_results is not a gpuscope-try/1 document";
    out.push_back(t);
    return out;
  }
  for (const auto& v : doc["variants"]) {
    TriedFix t;
    t.variant = v.value("variant", "");
    if (v.contains("fixes") && v["fixes"].is_array())
      for (const auto& f : v["fixes"])
        if (f.is_string()) t.fixes.push_back(f.get<std::string>());
    t.state = v.value("state", "");
    if (v.contains("why") && v["why"].is_string()) t.why = v["why"].get<std::string>();
    if (v.contains("step_ms") && v["step_ms"].is_number()) t.step_ms = v["step_ms"].get<double>();
    if (v.contains("saving_pct") && v["saving_pct"].is_number()) {
      t.measured = true;
      t.measured_saving_pct = v["saving_pct"].get<double>();
      const auto& r = v["saving_range_pct"];
      if (r.is_array() && r.size() == 2 && r[0].is_number() && r[1].is_number()) {
        t.measured_low_pct = r[0].get<double>();
        t.measured_high_pct = r[1].get<double>();
      } else {
        t.measured_low_pct = t.measured_high_pct = t.measured_saving_pct;
      }
      if (v.contains("p_value") && v["p_value"].is_number()) t.p_value = v["p_value"].get<double>();
      t.significant = v.value("significant", false);
    }
    predict(t, whatif);
    if (t.measured && t.predicted_saving_pct)
      t.within_range = t.measured_high_pct >= *t.predicted_low_pct && t.measured_low_pct <= *t.predicted_high_pct;
    out.push_back(t);
  }
  return out;
}

std::string tried_line(const TriedFix& t) {
  std::string s = (t.variant.empty() ? std::string("?") : t.variant) + ": ";
  if (t.measured)
    s += "measured " + signed1(t.measured_saving_pct) + " % (" + signed1(t.measured_low_pct) + ".." +
         signed1(t.measured_high_pct) + " %)" + (t.significant ? "" : ", not significant");
  else
    s += (t.state.empty() ? std::string("not measured") : t.state) + (t.why.empty() ? "" : ": " + t.why);
  if (t.predicted_saving_pct)
    s += ", predicted " + signed1(*t.predicted_saving_pct) + " % (" + signed1(*t.predicted_low_pct) + ".." +
         signed1(*t.predicted_high_pct) + " %)";
  else
    s += ", predicted: not priced by this replay";
  if (t.within_range) s += *t.within_range ? ": within range" : ": outside range";
  return s;
}

}  // namespace gpuscope::analyzer
