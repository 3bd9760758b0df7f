// `gpuscope check`: one recording against absolute limits read from a budget
// file. The file is strict (unknown keys and rule ids are errors): a misspelt
// limit that silently stops gating would be worse than a failing job.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "analyzer/rule_docs.h"
#include "trace_formats/common/error.h"
#include "regress/diff.h"
#include "report/format.h"

namespace gpuscope::regress {
namespace {

using nlohmann::json;

double positive_number(const json& v, const std::string& key, const std::string& source) {
  if (!v.is_number()) throw Error(source + ": \"" + key + "\" must be a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d) || d <= 0) throw Error(source + ": \"" + key + "\" must be greater than 0, got " + v.dump());
  return d;
}

std::string file_name(const std::string& path) {
  const size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

}  // namespace

Budget parse_budget(const std::string& text, const std::string& source) {
  json j;
  // JSON lets a key repeat and nlohmann keeps the last: a budget that says a
  // limit twice is a mistake to show, not a value to pick.
  std::vector<std::set<std::string>> keys;
  auto once = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    else if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw Error(source + ": key \"" + parsed.get<std::string>() + "\" appears twice; give each limit once");
    return true;
  };
  try {
    j = json::parse(text, once);
  } catch (const json::out_of_range& e) {  // a number beyond a double, such as 1e309
    // nlohmann says "[json.exception.out_of_range.406] number overflow parsing '1e999'".
    std::string what = e.what();
    const size_t quote = what.find('\'');
    const std::string number = quote == std::string::npos ? "" : what.substr(quote + 1, what.rfind('\'') - quote - 1);
    throw Error(source + ": the number " + (number.empty() ? std::string("in it") : number) +
                " is out of range (a limit is a finite number greater than 0)");
  } catch (const json::exception& e) {  // parse errors
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    // Without nlohmann's "[json.exception.parse_error.101] " tag: the reason is for people.
    if (what.starts_with("[json.exception.")) what.erase(0, what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2);
    throw Error(source + ": not valid JSON (" + what + ")");
  }
  if (!j.is_object()) throw Error(source + ": a budget is a JSON object, e.g. {\"max_step_ms_median\": 25}");
  Budget b;
  std::set<std::string> rules;
  for (const auto& r : analyzer::rule_docs()) rules.insert(r.id);
  for (const auto& [key, v] : j.items()) {
    if (key == "comment") continue;
    if (key == "max_step_ms_median") b.max_step_ms_median = positive_number(v, key, source);
    else if (key == "max_step_ms_p95") b.max_step_ms_p95 = positive_number(v, key, source);
    else if (key == "max_peak_memory_bytes") b.max_peak_memory_bytes = static_cast<int64_t>(std::llround(positive_number(v, key, source)));
    else if (key == "min_gpu_utilization") {
      const double u = positive_number(v, key, source);
      if (u > 1) throw Error(source + ": \"min_gpu_utilization\" is a fraction in (0, 1], e.g. 0.8, got " + v.dump());
      b.min_gpu_utilization = u;
    } else if (key == "forbid_findings") {
      if (!v.is_array()) throw Error(source + ": \"forbid_findings\" must be an array of rule ids, e.g. [\"host-sync\"]");
      for (const auto& id : v) {
        if (!id.is_string()) throw Error(source + ": \"forbid_findings\" holds " + id.dump() + ", not a rule id string");
        const auto s = id.get<std::string>();
        if (!rules.count(s)) {
          std::string known;
          for (const auto& r : rules) known += (known.empty() ? "" : ", ") + r;
          throw Error(source + ": unknown rule id \"" + s + "\" in forbid_findings (known: " + known + ")");
        }
        b.forbid_findings.push_back(s);
      }
    } else {
      throw Error(source + ": unknown key \"" + key +
                  "\" (known: max_step_ms_median, max_step_ms_p95, max_peak_memory_bytes, min_gpu_utilization, "
                  "forbid_findings, comment)");
    }
  }
  if (!b.max_step_ms_median && !b.max_step_ms_p95 && !b.max_peak_memory_bytes && !b.min_gpu_utilization &&
      b.forbid_findings.empty())
    throw Error(source + ": the budget sets no limit");
  return b;
}

Budget load_budget(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path + ": cannot read the budget file");
  std::stringstream s;
  s << f.rdbuf();
  return parse_budget(s.str(), path);
}

bool CheckResult::pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const BudgetCheck& c) { return c.pass; });
}

CheckResult check(const Recording& run, const Budget& budget, const std::string& budget_name) {
  const analyzer::Analysis& a = run.analysis();
  CheckResult r;
  r.recording = file_name(run.path());
  r.budget = file_name(budget_name);
  r.run.recording = r.recording;
  r.run.step_source = a.summary.step_source_detail;
  r.run.steps = a.summary.steps;
  r.run.warmup_skipped = a.summary.warmup_skipped;
  r.run.step_ms = run.step_ms();
  r.run.median_ms = median_of(r.run.step_ms);
  r.run.p95_ms = percentile_of(r.run.step_ms, 95);
  for (const auto& d : a.summary.devices)
    if (d.id == a.summary.device) r.run.device_name = d.name;

  auto step_limit = [&](const char* name, double limit, double actual, const char* what) {
    BudgetCheck c{name, report::duration(limit), report::duration(actual), actual <= limit, "", limit, actual};
    c.detail = std::string(what) + " over " + std::to_string(r.run.steps) + " analysed steps" +
               (c.pass ? "" : ": " + report::signed_percent(actual / limit - 1) + " over the limit");
    r.checks.push_back(c);
  };
  if (budget.max_step_ms_median) step_limit("max_step_ms_median", *budget.max_step_ms_median, r.run.median_ms, "median step time");
  if (budget.max_step_ms_p95) step_limit("max_step_ms_p95", *budget.max_step_ms_p95, r.run.p95_ms, "95th percentile step time");

  if (budget.max_peak_memory_bytes) {
    const auto& m = a.memory;
    // The largest footprint recorded: what the allocator held, else what CUDA handed out.
    int64_t peak = -1;
    std::string what;
    for (auto [v, name] : {std::pair{m.peak_reserved, "peak reserved by the torch allocator"},
                           std::pair{m.peak_allocated, "peak allocated by the torch allocator"},
                           std::pair{m.peak_device_used, "peak CUDA memory in use"}})
      if (v > peak) peak = v, what = name;
    if (peak < 0)
      throw Error(run.path() + ": the budget limits peak memory, but the recording holds no memory events "
                               "(record with the torch plugin, or --trace ...,memory)");
    const auto limit = *budget.max_peak_memory_bytes;
    BudgetCheck c{"max_peak_memory_bytes", format_bytes(static_cast<double>(limit)), format_bytes(static_cast<double>(peak)),
                  peak <= limit, what, static_cast<double>(limit), static_cast<double>(peak)};
    if (!c.pass) c.detail += ": " + report::signed_bytes(static_cast<double>(peak - limit)) + " over the limit";
    r.checks.push_back(c);
  }
  if (budget.min_gpu_utilization) {
    if (a.summary.device < 0)
      throw Error(run.path() + ": the budget sets min_gpu_utilization, but the recording has no GPU activity");
    const double u = a.summary.gpu_utilization;
    BudgetCheck c{"min_gpu_utilization", format_percent(*budget.min_gpu_utilization), format_percent(u),
                  u >= *budget.min_gpu_utilization, "GPU busy over step time", *budget.min_gpu_utilization, u};
    r.checks.push_back(c);
  }
  for (const auto& id : budget.forbid_findings) {
    const analyzer::Finding* found = nullptr;
    for (const auto& f : a.findings)
      if (f.id == id) found = &f;
    BudgetCheck c{"forbid_findings: " + id, "absent", found ? "present" : "absent", found == nullptr, "", 0, found ? 1.0 : 0.0};
    c.detail = found ? found->title + "; " + found->evidence.summary + " (saves ~" + format_fixed(found->saving_ms_per_step, 3) +
                           " ms per step, " + format_fixed(found->saving_pct, 1) + " %)"
                     : "no " + id + " finding";
    r.checks.push_back(c);
  }
  if (r.run.steps < 5)
    r.notes.push_back("only " + std::to_string(r.run.steps) + " analysed step(s): the step-time figures are rough");
  return r;
}

}  // namespace gpuscope::regress
