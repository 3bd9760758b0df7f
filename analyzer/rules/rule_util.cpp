#include "analyzer/rules/rule_util.h"

#include <cmath>
#include <numeric>

namespace gpuscope::analyzer {

Finding make_finding(const Rule& rule, const Context& ctx, double saving_ns) {
  Finding f;
  f.id = std::string(rule.id);
  f.title = std::string(rule.title);
  f.saving_ms_per_step = saving_ns / 1e6 / ctx.n_steps;
  f.saving_pct = ctx.step_ns > 0 ? 100.0 * saving_ns / static_cast<double>(ctx.step_ns) : 0;
  f.severity = f.saving_pct >= kHighSeverityPct    ? Severity::kHigh
               : f.saving_pct >= kMediumSeverityPct ? Severity::kMedium
                                                    : Severity::kLow;
  return f;
}

std::string ms(double v) { return format_fixed(v, v >= 100 ? 1 : 3) + " ms"; }

std::string ns_text(double ns) {
  if (ns >= 1e6) return ms(ns / 1e6);
  return format_fixed(ns / 1e3, 1) + " us";
}

std::string pct(double p) { return format_fixed(p, 1) + " %"; }

std::string short_kernel_name(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  // Cut the argument list: the first '(' at template depth 0.
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    else if (name[i] == '>' && depth > 0) --depth;
    else if (name[i] == '(' && depth == 0 && i > 0) {
      name = name.substr(0, i);
      break;
    }
  }
  std::string s(name.substr(0, 120));
  if (name.size() > 120) s += "...";
  return s;
}

void Tally::add(const std::string& label, int64_t ns, int64_t count, const std::string& detail) {
  Item& it = items_[label];
  it.ns += ns;
  it.count += count;
  if (it.detail.empty()) it.detail = detail;
}

std::vector<Contributor> Tally::top(size_t n) const {
  std::vector<std::pair<std::string, Item>> v(items_.begin(), items_.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.ns != b.second.ns ? a.second.ns > b.second.ns : a.first < b.first;
  });
  std::vector<Contributor> out;
  for (size_t i = 0; i < v.size() && i < n; ++i)
    out.push_back({v[i].first, static_cast<double>(v[i].second.ns) / 1e6, v[i].second.count, v[i].second.detail});
  return out;
}

TimeRange gap_range(const Gap& g, const std::string& label) { return {g.start, g.end, label}; }

std::vector<TimeRange> worst_steps(const Context& ctx, const std::vector<int64_t>& per_step, size_t n,
                                   const std::string& what) {
  std::vector<size_t> idx(per_step.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return per_step[a] > per_step[b]; });
  std::vector<TimeRange> out;
  for (size_t i = 0; i < idx.size() && out.size() < n; ++i) {
    if (per_step[idx[i]] <= 0) break;
    const StepWindow& s = ctx.steps[idx[i]];
    out.push_back({s.start, s.end, "step " + std::to_string(s.number) + ": " + ns_text(static_cast<double>(per_step[idx[i]])) + " " + what});
  }
  return out;
}

std::string user_op_name(const Context& ctx, uint32_t corr) {
  return ctx.op_name(ctx.user_op(ctx.op_of_corr(corr)));
}

std::string op_inputs(const Context& ctx, uint32_t op) {
  if (op == kNone) return {};
  const OpRec& o = ctx.m.ops[op];
  std::string s;
  if (o.shapes != kNone) s += ctx.name(o.shapes);
  if (o.dtypes != kNone) s += (s.empty() ? "" : " ") + ctx.name(o.dtypes);
  return s;
}

}  // namespace gpuscope::analyzer
