// diff(): the step-time verdict, then what changed per step: kernels and ops
// (added, removed, grown, shrunk) ranked by their part in the step-time change,
// copies, memory peaks, utilization, the breakdown and the findings.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "trace_formats/common/error.h"
#include "regress/diff.h"
#include "report/format.h"

namespace gpuscope::regress {
namespace {

// Kernels tested per step for significance: the ones that moved most.
constexpr size_t kTestedKernels = 50;
// Below either of these a kernel's or op's change is "unchanged".
constexpr double kUnchangedMs = 0.0005;
constexpr double kUnchangedRel = 0.01;

std::string file_name(const std::string& path) {
  const size_t p = path.find_last_of('/');
  return p == std::string::npos ? path : path.substr(p + 1);
}

SideSummary side_summary(const Recording& r) {
  const analyzer::Analysis& a = r.analysis();
  SideSummary s;
  s.recording = file_name(r.path());
  for (const auto& d : a.summary.devices)
    if (d.id == a.summary.device) s.device_name = d.name;
  s.step_source = a.summary.step_source_detail;
  s.steps = a.summary.steps;
  s.warmup_skipped = a.summary.warmup_skipped;
  s.step_ms = r.step_ms();
  s.median_ms = median_of(s.step_ms);
  s.p95_ms = percentile_of(s.step_ms, 95);
  double sum = 0;
  for (double v : s.step_ms) sum += v;
  s.mean_ms = s.step_ms.empty() ? 0 : sum / static_cast<double>(s.step_ms.size());
  s.min_ms = s.step_ms.empty() ? 0 : *std::min_element(s.step_ms.begin(), s.step_ms.end());
  s.max_ms = s.step_ms.empty() ? 0 : *std::max_element(s.step_ms.begin(), s.step_ms.end());
  s.outliers = static_cast<int64_t>(a.summary.outlier_steps.size());
  return s;
}

double per_step(double total, int64_t steps) { return steps > 0 ? total / static_cast<double>(steps) : 0; }

void classify_change(Change& c) {
  c.delta_ms = c.new_ms - c.base_ms;
  if (c.base_count == 0 && c.new_count > 0) c.status = Status::kAdded;
  else if (c.new_count == 0 && c.base_count > 0) c.status = Status::kRemoved;
  else if (std::fabs(c.delta_ms) < kUnchangedMs || (c.base_ms > 0 && std::fabs(c.delta_ms) / c.base_ms < kUnchangedRel))
    c.status = Status::kUnchanged;
  else c.status = c.delta_ms > 0 ? Status::kGrown : Status::kShrunk;
  if (c.base_ms > 0) c.delta_pct = c.delta_ms / c.base_ms;
}

// Ranked by their part in the step-time change: with a significant change the
// items that moved with it come first; with none, the largest movers either way.
void rank(std::vector<Change>& v, Verdict verdict, double step_delta_ms) {
  const bool directional = verdict != Verdict::kNoChange;
  const double sign = step_delta_ms < 0 ? -1.0 : 1.0;
  std::stable_sort(v.begin(), v.end(), [&](const Change& a, const Change& b) {
    const double ka = directional ? a.delta_ms * sign : std::fabs(a.delta_ms);
    const double kb = directional ? b.delta_ms * sign : std::fabs(b.delta_ms);
    if (ka != kb) return ka > kb;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.name < b.name;
  });
}

std::vector<Change> kernel_changes(const Recording& base, const Recording& next) {
  const auto& A = base.analysis();
  const auto& B = next.analysis();
  std::map<std::string, Change> by;
  auto add = [&](const analyzer::KernelStat& k, int64_t steps, bool is_new) {
    Change& c = by[k.name];
    c.kind = "kernel";
    c.name = k.name;
    if (c.origin.empty()) c.origin = k.origin;
    (is_new ? c.new_ms : c.base_ms) = per_step(static_cast<double>(k.total_ns) / 1e6, steps);
    (is_new ? c.new_count : c.base_count) = per_step(static_cast<double>(k.count), steps);
  };
  for (const auto& k : A.top_kernels) add(k, A.summary.steps, false);
  for (const auto& k : B.top_kernels) add(k, B.summary.steps, true);
  std::vector<Change> out;
  for (auto& [name, c] : by) {
    classify_change(c);
    c.base_gpu_ms = c.base_ms;
    c.new_gpu_ms = c.new_ms;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Change> op_changes(const Recording& base, const Recording& next) {
  const auto& A = base.analysis();
  const auto& B = next.analysis();
  std::map<std::string, Change> by;
  auto add = [&](const analyzer::OpStat& o, int64_t steps, bool is_new) {
    Change& c = by[o.name];
    c.kind = "op";
    c.name = o.name;
    const double gpu = per_step(static_cast<double>(o.gpu_ns) / 1e6, steps);
    const double cpu = per_step(static_cast<double>(o.self_cpu_ns) / 1e6, steps);
    // An op costs the GPU time of its kernels plus its own CPU time, as the analyzer ranks them.
    (is_new ? c.new_ms : c.base_ms) = gpu + cpu;
    (is_new ? c.new_gpu_ms : c.base_gpu_ms) = gpu;
    (is_new ? c.new_cpu_ms : c.base_cpu_ms) = cpu;
    (is_new ? c.new_count : c.base_count) = per_step(static_cast<double>(o.count), steps);
  };
  for (const auto& o : A.top_ops) add(o, A.summary.steps, false);
  for (const auto& o : B.top_ops) add(o, B.summary.steps, true);
  std::vector<Change> out;
  for (auto& [name, c] : by) {
    classify_change(c);
    out.push_back(std::move(c));
  }
  return out;
}

// A per-step test for the kernels that moved most, so the report can say
// which kernel changes stand out from their own step-to-step noise.
void test_kernels(std::vector<Change>& kernels, const Recording& base, const Recording& next, double alpha) {
  std::vector<size_t> order(kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return std::fabs(kernels[a].delta_ms) > std::fabs(kernels[b].delta_ms); });
  order.resize(std::min(order.size(), kTestedKernels));
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(kernels[i].name);
  const auto a = base.kernel_step_ms(names), b = next.kernel_step_ms(names);
  for (size_t j = 0; j < order.size(); ++j) {
    Change& c = kernels[order[j]];
    const MannWhitney mw = mann_whitney(a[j], b[j]);
    c.p_value = mw.p_two_sided();
    c.significant = *c.p_value < alpha && c.status != Status::kUnchanged;
  }
}

std::string copy_label(const analyzer::CopyStat& c) {
  if (c.kind == "memset") return "memset " + c.dst_kind;
  return "memcpy " + c.direction + " " + c.src_kind + "->" + c.dst_kind;
}

std::vector<CopyChange> copy_changes(const analyzer::Analysis& A, const analyzer::Analysis& B) {
  std::map<std::string, CopyChange> by;
  auto add = [&](const analyzer::CopyStat& c, int64_t steps, bool is_new) {
    CopyChange& x = by[copy_label(c)];
    x.label = copy_label(c);
    (is_new ? x.new_bytes : x.base_bytes) += per_step(static_cast<double>(c.bytes), steps);
    (is_new ? x.new_ms : x.base_ms) += per_step(static_cast<double>(c.total_ns) / 1e6, steps);
    (is_new ? x.new_count : x.base_count) += per_step(static_cast<double>(c.count), steps);
  };
  for (const auto& c : A.copies) add(c, A.summary.steps, false);
  for (const auto& c : B.copies) add(c, B.summary.steps, true);
  std::vector<CopyChange> out;
  for (auto& [label, x] : by) out.push_back(x);
  std::stable_sort(out.begin(), out.end(), [](const CopyChange& a, const CopyChange& b) {
    return std::max(a.base_bytes, a.new_bytes) > std::max(b.base_bytes, b.new_bytes);
  });
  return out;
}

void memory_metric(DiffResult& d, const char* name, int64_t a, int64_t b) {
  if (a >= 0 && b >= 0) d.metrics.push_back({name, "bytes", static_cast<double>(a), static_cast<double>(b)});
  else if (a >= 0 || b >= 0)
    d.notes.push_back(std::string(name) + " recorded only in " + (a >= 0 ? "base" : "new") + ": not compared");
}

void fill_metrics(DiffResult& d, const analyzer::Analysis& A, const analyzer::Analysis& B) {
  const double na = std::max<double>(1, static_cast<double>(A.summary.steps));
  const double nb = std::max<double>(1, static_cast<double>(B.summary.steps));
  d.metrics.push_back({"step time median", "ms", d.base.median_ms, d.next.median_ms});
  d.metrics.push_back({"step time p95", "ms", d.base.p95_ms, d.next.p95_ms});
  if (A.summary.device >= 0 || B.summary.device >= 0)
    d.metrics.push_back({"GPU utilization", "fraction", A.summary.gpu_utilization, B.summary.gpu_utilization});
  memory_metric(d, "peak memory allocated", A.memory.peak_allocated, B.memory.peak_allocated);
  memory_metric(d, "peak memory reserved", A.memory.peak_reserved, B.memory.peak_reserved);
  memory_metric(d, "peak CUDA memory in use", A.memory.peak_device_used, B.memory.peak_device_used);
  double bytes_a = 0, bytes_b = 0;
  for (const auto& c : A.copies)
    if (c.kind == "memcpy") bytes_a += static_cast<double>(c.bytes);
  for (const auto& c : B.copies)
    if (c.kind == "memcpy") bytes_b += static_cast<double>(c.bytes);
  d.metrics.push_back({"memcpy volume per step", "bytes", bytes_a / na, bytes_b / nb});
  d.metrics.push_back({"kernels per step", "count", static_cast<double>(A.summary.kernels) / na,
                       static_cast<double>(B.summary.kernels) / nb});
  d.metrics.push_back({"ops per step", "count", static_cast<double>(A.summary.ops) / na, static_cast<double>(B.summary.ops) / nb});
  for (int i = 0; i < analyzer::Breakdown::kCategories; ++i)
    d.breakdown.push_back({analyzer::Breakdown::category(i), "ms", static_cast<double>(A.breakdown.get(i)) / 1e6 / na,
                           static_cast<double>(B.breakdown.get(i)) / 1e6 / nb});
}

void fill_findings(DiffResult& d, const analyzer::Analysis& A, const analyzer::Analysis& B) {
  std::map<std::string, FindingChange> by;
  for (const auto& f : A.findings) {
    FindingChange& c = by[f.id];
    c.id = f.id;
    c.title = f.title;
    c.base_saving_pct = f.saving_pct;
    c.severity = analyzer::severity_name(f.severity);
  }
  for (const auto& f : B.findings) {
    FindingChange& c = by[f.id];
    c.id = f.id;
    c.title = f.title;
    c.new_saving_pct = f.saving_pct;
    c.severity = analyzer::severity_name(f.severity);
  }
  for (auto& [id, c] : by) {
    c.status = !c.base_saving_pct ? "appeared" : !c.new_saving_pct ? "gone" : "persists";
    d.findings.push_back(c);
  }
  auto order = [](const FindingChange& c) { return c.status == "appeared" ? 0 : c.status == "gone" ? 1 : 2; };
  std::stable_sort(d.findings.begin(), d.findings.end(),
                   [&](const FindingChange& a, const FindingChange& b) { return order(a) < order(b); });
}

void fill_notes(DiffResult& d, const Recording& base, const Recording& next) {
  const auto& A = base.analysis().summary;
  const auto& B = next.analysis().summary;
  if (d.base.device_name != d.next.device_name && !d.base.device_name.empty() && !d.next.device_name.empty())
    d.notes.push_back("different GPUs: base ran on " + d.base.device_name + ", new on " + d.next.device_name +
                      "; kernel names and times may differ for that reason alone");
  if (A.step_source != B.step_source)
    d.notes.push_back("steps found differently: base from " + d.base.step_source + ", new from " + d.next.step_source);
  if ((A.ops > 0) != (B.ops > 0))
    d.notes.push_back(std::string("torch ops recorded only in ") + (A.ops > 0 ? "base" : "new") +
                      ": every op shows as " + (A.ops > 0 ? "removed" : "added"));
  if ((A.device >= 0) != (B.device >= 0))
    d.notes.push_back(std::string("GPU activity recorded only in ") + (A.device >= 0 ? "base" : "new"));
  for (const auto* s : {&d.base, &d.next}) {
    const char* which = s == &d.base ? "base" : "new";
    if (s->outliers > 0)
      d.notes.push_back(std::string(which) + " has " + std::to_string(s->outliers) +
                        " outlier step(s) (over 1.5x its median); the rank test is not swayed by them");
  }
  if (base.imported()) d.notes.push_back("base was imported from a torch.profiler trace");
  if (next.imported()) d.notes.push_back("new was imported from a torch.profiler trace");
}

void fill_causes(DiffResult& d, const std::vector<Change>& copies, double step_delta_ms) {
  if (d.verdict == Verdict::kNoChange || step_delta_ms == 0) return;
  auto first = [&](const std::vector<Change>& list) {
    for (const Change& c : list) {
      if (c.status == Status::kUnchanged || !c.share || *c.share < kMinCauseShare) continue;
      if (c.p_value && !c.significant) continue;  // moved no more than its own step-to-step noise
      d.causes.push_back({c.kind, c.name, c.delta_ms, *c.share});
      return;
    }
  };
  first(d.kernels);
  first(d.ops);
  first(copies);
  const MetricChange* best = nullptr;
  for (const auto& b : d.breakdown)
    if (!best || (b.next - b.base) / step_delta_ms > (best->next - best->base) / step_delta_ms) best = &b;
  if (best && (best->next - best->base) / step_delta_ms >= kMinCauseShare)
    d.causes.push_back({"breakdown", best->name, best->next - best->base, (best->next - best->base) / step_delta_ms});
}

std::string headline(const DiffResult& d) {
  const std::string shift = "step time " + report::signed_percent(d.test.shift) + " (median " + report::duration(d.base.median_ms) +
                            " -> " + report::duration(d.next.median_ms) + ")";
  const std::string thr = format_percent(d.options.threshold, 1);
  auto p_text = [](double p) { return "p " + report::p_is(p); };
  switch (d.verdict) {
    case Verdict::kRegression:
      return "Regression: " + shift + ", beyond the " + thr + " threshold (" + p_text(d.test.p_slower) + ")";
    case Verdict::kImprovement:
      return "Faster: " + shift + ", beyond the " + thr + " threshold (" + p_text(d.test.p_faster) + ")";
    case Verdict::kWithinThreshold:
      return "No regression: " + shift + " is significant but within the " + thr + " threshold";
    case Verdict::kNoChange: break;
  }
  const double two_sided = std::min(1.0, 2 * std::min(d.test.p_slower, d.test.p_faster));
  return "No significant change: " + shift + " is within the noise (two-sided " + p_text(two_sided) + ")";
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::kAdded: return "added";
    case Status::kRemoved: return "removed";
    case Status::kGrown: return "grown";
    case Status::kShrunk: return "shrunk";
    case Status::kUnchanged: return "unchanged";
  }
  return "unchanged";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kRegression: return "regression";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kWithinThreshold: return "within_threshold";
    case Verdict::kNoChange: return "no_change";
  }
  return "no_change";
}

double parse_percent(const std::string& text, const std::string& option) {
  std::string s;
  for (char c : text)
    if (c != ' ') s += c;
  if (!s.empty() && s.back() == '%') s.pop_back();
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || !std::isfinite(v) || v < 0 || v >= 1000)
    throw Error(option + ": expected a percentage such as 5% or 2.5, got '" + text + "'");
  return v / 100.0;
}

DiffResult diff(const Recording& base, const Recording& next, const DiffOptions& options) {
  DiffResult d;
  d.options = options;
  d.base = side_summary(base);
  d.next = side_summary(next);
  d.test = shift_test(d.base.step_ms, d.next.step_ms);
  switch (classify(d.test, options.alpha, options.threshold)) {
    case Direction::kSlower: d.verdict = Verdict::kRegression; break;
    case Direction::kFaster: d.verdict = Verdict::kImprovement; break;
    case Direction::kSmallSignificant: d.verdict = Verdict::kWithinThreshold; break;
    case Direction::kNone: d.verdict = Verdict::kNoChange; break;
  }
  d.median_change = d.base.median_ms > 0 ? d.next.median_ms / d.base.median_ms - 1 : 0;
  d.p95_change = d.base.p95_ms > 0 ? d.next.p95_ms / d.base.p95_ms - 1 : 0;

  // The step-time change in ms per step, from the robust shift estimate.
  const double step_delta_ms = d.base.median_ms * d.test.shift;
  d.kernels = kernel_changes(base, next);
  test_kernels(d.kernels, base, next, options.alpha);
  d.ops = op_changes(base, next);
  for (auto* list : {&d.kernels, &d.ops}) {
    if (d.verdict != Verdict::kNoChange && std::fabs(step_delta_ms) > 0)
      for (Change& c : *list) c.share = c.delta_ms / step_delta_ms;
    rank(*list, d.verdict, step_delta_ms);
  }
  d.copies = copy_changes(base.analysis(), next.analysis());
  // Copies compete with kernels and ops for the top places: moving twice the
  // data costs step time as surely as a slower kernel.
  std::vector<Change> copies;
  for (const CopyChange& x : d.copies) {
    Change c;
    c.kind = x.label.rfind("memset", 0) == 0 ? "memset" : "memcpy";
    c.name = x.label;
    c.base_ms = x.base_ms;
    c.new_ms = x.new_ms;
    c.base_count = x.base_count;
    c.new_count = x.new_count;
    classify_change(c);
    if (d.verdict != Verdict::kNoChange && std::fabs(step_delta_ms) > 0) c.share = c.delta_ms / step_delta_ms;
    copies.push_back(std::move(c));
  }
  for (const auto* list : {&d.kernels, &d.ops, &copies})
    for (const Change& c : *list)
      if (c.status != Status::kUnchanged) d.top.push_back(c);
  rank(d.top, d.verdict, step_delta_ms);
  if (d.top.size() > static_cast<size_t>(std::max(0, options.top))) d.top.resize(static_cast<size_t>(std::max(0, options.top)));
  fill_metrics(d, base.analysis(), next.analysis());
  fill_findings(d, base.analysis(), next.analysis());
  fill_notes(d, base, next);
  rank(copies, d.verdict, step_delta_ms);
  fill_causes(d, copies, step_delta_ms);
  d.headline = headline(d);
  return d;
}

}  // namespace gpuscope::regress
