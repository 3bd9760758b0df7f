// low-utilization: the GPU idles while the CPU does other work.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMaxUtilization = 0.80;
// Below 5 % the idle left between launches is per-op Python and dispatch time
// that no DataLoader worker takes over: 2.3-3.0 % on the launch-bound and
// per-parameter .item() loops of tests/gpu/models, with nothing to move.
constexpr double kMinSavingPct = 5.0;

constexpr Threshold kThresholds[] = {
    {"kMaxUtilization", kMaxUtilization, "fraction", "GPU busy share of step time below which this rule looks"},
    {"kMinSavingPct", kMinSavingPct, "%", "GPU idle during CPU work, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kLowUtilizationRule = {
    "low-utilization",
    "The GPU idles while the CPU computes",
    "GPU busy less than kMaxUtilization of the step, with idle gaps that no specific cause explains: the CPU is "
    "inside torch CPU ops (cpu_compute) or in code outside any recorded op, API call or DataLoader wait (other).",
    "GPU idle time in cpu_compute and other gaps per step: moved to DataLoader workers or onto the GPU, that "
    "CPU work overlaps with GPU work.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const Summary& s = in.analysis.summary;
  if (s.gpu_utilization >= kMaxUtilization) return std::nullopt;
  const auto cpu = static_cast<size_t>(IdleCause::kCpuCompute), other = static_cast<size_t>(IdleCause::kOther);
  const int64_t idle = c.idle_by_cause[cpu] + c.idle_by_cause[other];
  if (c.pct_of_step(idle) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kLowUtilizationRule, c, static_cast<double>(idle));
  f.evidence.summary = "The GPU was busy " + pct(100 * s.gpu_utilization) + " of the step; " +
                       ms(c.ms_per_step(idle)) + " per step of idle time falls while the CPU runs torch CPU ops (" +
                       ms(c.ms_per_step(c.idle_by_cause[cpu])) + ") or code outside any recorded op (" +
                       ms(c.ms_per_step(c.idle_by_cause[other])) + ").";
  f.evidence.metrics = {
      {"gpu_utilization_pct", 100 * s.gpu_utilization, "%"},
      {"idle_cpu_compute_ms_per_step", c.ms_per_step(c.idle_by_cause[cpu]), "ms"},
      {"idle_other_ms_per_step", c.ms_per_step(c.idle_by_cause[other]), "ms"},
      {"step_ms_mean", c.mean_step_ms(), "ms"},
  };
  // Top-level ops that ran on the CPU during those gaps, by their time inside the gaps.
  Tally ops;
  for (const Gap& g : c.gaps) {
    if (g.cause != IdleCause::kCpuCompute && g.cause != IdleCause::kOther) continue;
    auto first = std::lower_bound(c.m.ops.begin(), c.m.ops.end(), g.start, [](const OpRec& o, int64_t t) { return o.start < t; });
    // A few ops that started before the gap may still run into it.
    auto it = first - std::min<std::ptrdiff_t>(first - c.m.ops.begin(), 16);
    for (size_t n = 0; it != c.m.ops.end() && it->start < g.end && n < 80; ++it, ++n) {
      const auto i = static_cast<uint32_t>(it - c.m.ops.begin());
      const int64_t overlap = std::min(it->end, g.end) - std::max(it->start, g.start);
      if (c.m.op_parent[i] == kNone && overlap > 0) ops.add(c.name(it->name), overlap, 1);
    }
  }
  f.evidence.top = ops.top(5);
  std::vector<Gap> largest = c.largest[cpu];
  largest.insert(largest.end(), c.largest[other].begin(), c.largest[other].end());
  std::sort(largest.begin(), largest.end(), [](const Gap& a, const Gap& b) { return a.length() > b.length(); });
  for (size_t i = 0; i < largest.size() && i < 5; ++i)
    f.evidence.ranges.push_back(gap_range(largest[i], std::string("GPU idle, CPU ") +
                                                          (largest[i].cause == IdleCause::kCpuCompute ? "in torch ops" : "busy elsewhere") +
                                                          ": " + ns_text(static_cast<double>(largest[i].length()))));
  f.fix.text = "Move per-batch CPU work off the training thread: into the Dataset (run by DataLoader workers in "
               "parallel with the GPU) or onto the GPU as tensor ops. Then check what remains with a larger batch.";
  f.fix.code =
      "class Batches(torch.utils.data.Dataset):\n"
      "    def __getitem__(self, i):\n"
      "        return preprocess(raw[i])          # runs in worker processes\n"
      "loader = torch.utils.data.DataLoader(Batches(), batch_size=bs, num_workers=8, pin_memory=True)\n"
      "\n"
      "# or on the GPU instead of numpy on the host:\n"
      "x = x.to(\"cuda\", non_blocking=True)\n"
      "x = (x - mean) / std\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
