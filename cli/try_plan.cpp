#include "cli/try_plan.h"

#include <algorithm>
#include <set>

#include "trace_formats/common/error.h"

namespace gpuscope::cli::try_plan {
namespace {

using nlohmann::json;

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

std::vector<std::string> strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& s : j)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// A saving range in % of `job_ms` from a step range [lo, hi] in ms.
Prediction from_range(const json& entry, double job_ms, const std::string& from) {
  Prediction p;
  p.from = from;
  p.saving_pct = entry.value("saving_pct", 0.0);
  p.low_pct = p.high_pct = p.saving_pct;
  const json& range = entry.contains("step_range_ms") ? entry["step_range_ms"] : json();
  if (job_ms > 0 && range.is_array() && range.size() == 2 && range[0].is_number() && range[1].is_number()) {
    p.low_pct = 100.0 * (1.0 - range[1].get<double>() / job_ms);
    p.high_pct = 100.0 * (1.0 - range[0].get<double>() / job_ms);
  }
  return p;
}

bool known(const std::string& fix) {
  const auto& h = hookable();
  return std::find(h.begin(), h.end(), fix) != h.end() || needs_code_change(fix);
}

std::string known_list() {
  std::string s;
  for (const auto& f : hookable()) s += (s.empty() ? "" : ", ") + f;
  return s + ", host-sync";
}

}  // namespace

const std::vector<std::string>& hookable() {
  static const std::vector<std::string> k = {"amp",     "channels-last", "fused-optimizer", "compile",
                                             "cuda-graphs", "dataloader-stall", "pageable-memcpy"};
  return k;
}

bool needs_code_change(const std::string& fix) { return fix == "host-sync"; }

std::string Variant::name() const {
  std::string s;
  for (const auto& f : fixes) s += (s.empty() ? "" : "+") + f;
  return s;
}

std::vector<std::vector<std::string>> parse_fixes(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  std::set<std::set<std::string>> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::vector<std::string> fixes;
    size_t s = 0;
    while (s <= item.size()) {
      const size_t plus = item.find('+', s);
      const std::string fix = item.substr(s, plus == std::string::npos ? std::string::npos : plus - s);
      if (fix.empty()) throw Error("try: --fixes " + text + ": an empty fix (expected e.g. amp,compile+cuda-graphs)");
      if (!known(fix)) throw Error("try: --fixes: unknown fix '" + fix + "' (known: " + known_list() + ")");
      if (std::find(fixes.begin(), fixes.end(), fix) == fixes.end()) fixes.push_back(fix);
      if (plus == std::string::npos) break;
      s = plus + 1;
    }
    if (!seen.insert(as_set(fixes)).second) throw Error("try: --fixes: the variant " + item + " is given twice");
    out.push_back(fixes);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::optional<Prediction> predict(const std::vector<std::string>& fixes, const json& report) {
  const json& w = report.contains("whatif") ? report["whatif"] : json();
  if (!w.is_object() || !w.value("available", false)) return std::nullopt;
  const double job_ms = w.value("job_step_ms", 0.0);
  const std::set<std::string> want = as_set(fixes);
  if (fixes.size() == 1 && w.contains("fixes"))
    for (const auto& f : w["fixes"])
      if (f.value("fix", "") == fixes[0] && f.value("applies", false)) return from_range(f, job_ms, "fixes");
  if (w.contains("plan"))
    for (const auto& p : w["plan"])
      if (as_set(strings(p["fixes"])) == want) return from_range(p, job_ms, "plan");
  if (w.contains("measure_first"))
    for (const auto& m : w["measure_first"])
      if (m.is_object() && m.contains("fixes") && as_set(strings(m["fixes"])) == want)
        return from_range(m, job_ms, "measure_first");
  if (w.contains("asked"))
    for (const auto& q : w["asked"])
      if (as_set(strings(q["fixes"])) == want && strings(q["skipped"]).empty()) return from_range(q, job_ms, "asked");
  return std::nullopt;
}

Plan make_plan(const std::vector<std::vector<std::string>>& fixes, const json* report) {
  Plan plan;
  if (report) {
    const json& w = report->contains("whatif") ? (*report)["whatif"] : json();
    plan.replay_available = w.is_object() && w.value("available", false);
    plan.job_step_ms = plan.replay_available ? w.value("job_step_ms", 0.0) : 0.0;
    const json& s = report->contains("summary") ? (*report)["summary"] : json();
    if (s.is_object() && s.contains("devices") && s["devices"].is_array() && !s["devices"].empty())
      plan.gpu = s["devices"][0].value("name", "");
    if (s.is_object()) plan.torch = s.value("torch_version", "");
  }
  std::vector<std::vector<std::string>> wanted = fixes;
  if (wanted.empty() && report) {
    // The findings' fixes, each cumulative entry of the plan, then what the
    // report says to measure before adopting it (might save, might slow).
    std::set<std::set<std::string>> seen;
    const auto add = [&](const std::vector<std::string>& v) {
      if (!v.empty() && seen.insert(as_set(v)).second) wanted.push_back(v);
    };
    if (report->contains("findings"))
      for (const auto& f : (*report)["findings"])
        if (f.contains("fix_id") && f["fix_id"].is_string()) add({f["fix_id"].get<std::string>()});
    const json& w = report->contains("whatif") ? (*report)["whatif"] : json();
    if (w.is_object() && w.contains("plan"))
      for (const auto& p : w["plan"]) add(strings(p["fixes"]));
    if (w.is_object() && w.contains("measure_first") && w["measure_first"].is_array())
      for (const auto& m : w["measure_first"])
        if (m.is_object() && m.contains("fixes")) add(strings(m["fixes"]));
  }
  if (wanted.empty() && !report)
    for (const auto& f : hookable()) wanted.push_back({f});
  for (const auto& v : wanted) {
    std::string code;
    for (const auto& f : v)
      if (needs_code_change(f) || !known(f)) code = f;
    Variant var{v, std::nullopt};
    if (!code.empty()) {
      plan.not_tried.push_back(var.name() + (v.size() == 1 ? ": needs a code change"
                                                          : ": includes " + code + ", which needs a code change"));
      continue;
    }
    if (report) var.predicted = predict(v, *report);
    plan.variants.push_back(var);
  }
  return plan;
}

}  // namespace gpuscope::cli::try_plan
