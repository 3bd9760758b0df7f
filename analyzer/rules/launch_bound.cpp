// launch-bound: kernels too short to cover the CPU time it takes to launch them.
#include "analyzer/rules/rule_util.h"

#include "analyzer/steps.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;
constexpr double kShortKernelUs = 50;  // median kernel shorter than this: launch cost matters

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "GPU idle while the CPU launches, share of step time, to report"},
    {"kShortKernelUs", kShortKernelUs, "us", "median kernel duration below which the step counts as launch-bound"},
    {"kLaunchGapPerLaunchUs", static_cast<double>(kLaunchGapPerLaunchNs) / 1000, "us",
     "idle gap per launch call inside it, at most, for the gap to count as launch overhead"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kLaunchBoundRule = {
    "launch-bound",
    "The GPU waits while the CPU launches many short kernels",
    "GPU idle gaps during which the CPU issued kernel launches (cudaLaunchKernel and async copies) at no more than "
    "kLaunchGapPerLaunchUs of CPU time per launch, in a step whose median kernel is shorter than kShortKernelUs.",
    "GPU idle time in launch-overhead gaps per step: replaying the step as a CUDA graph removes nearly all of it.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto cause = static_cast<size_t>(IdleCause::kLaunch);
  const int64_t idle = c.idle_by_cause[cause];
  if (c.kernels.empty() || c.pct_of_step(idle) < kMinSavingPct) return std::nullopt;
  std::vector<double> durs;
  durs.reserve(c.kernels.size());
  for (uint32_t i : c.kernels) durs.push_back(static_cast<double>(c.m.kernels[i].dur));
  const double median_us = median(std::move(durs)) / 1000;
  if (median_us >= kShortKernelUs) return std::nullopt;

  int64_t launches = 0, launch_api_ns = 0;
  Tally ops;
  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    if (a.cls != ApiClass::kLaunch) continue;
    ++launches;
    launch_api_ns += a.dur;
  }
  // Counted by string id (ops and kernels can number millions), named afterwards.
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> by_id;  // (op? 1:0)<<32 | name -> (ns, count)
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    uint32_t op = c.user_op(c.op_of_corr(k.corr));
    uint64_t key = op == kNone ? k.name : (uint64_t{1} << 32) | c.m.ops[op].name;
    auto& v = by_id[key];
    v.first += k.dur;
    v.second += 1;
  }
  for (const auto& [key, v] : by_id) {
    auto id = static_cast<uint32_t>(key);
    ops.add((key >> 32) ? c.name(id) : short_kernel_name(c.m.str(id)), v.first, v.second);
  }
  Finding f = make_finding(kLaunchBoundRule, c, static_cast<double>(idle));
  const double per_launch_us =
      c.launch_gap_launches > 0 ? static_cast<double>(idle) / static_cast<double>(c.launch_gap_launches) / 1000 : 0;
  f.evidence.summary = format_fixed(static_cast<double>(c.kernels.size()) / c.n_steps, 0) + " kernels per step with a median of " +
                       format_fixed(median_us, 1) + " us; the GPU idled " + ms(c.ms_per_step(idle)) + " per step (" +
                       pct(f.saving_pct) + ") waiting for the CPU to launch the next one (" + format_fixed(per_launch_us, 1) +
                       " us of CPU per launch).";
  f.evidence.metrics = {
      {"kernels_per_step", static_cast<double>(c.kernels.size()) / c.n_steps, "count"},
      {"median_kernel_us", median_us, "us"},
      {"launch_calls_per_step", static_cast<double>(launches) / c.n_steps, "count"},
      {"launch_api_ms_per_step", c.ms_per_step(launch_api_ns), "ms"},
      {"gpu_idle_launching_ms_per_step", c.ms_per_step(idle), "ms"},
      {"cpu_us_per_launch_in_gaps", per_launch_us, "us"},
      {"gpu_utilization_pct", 100.0 * in.analysis.summary.gpu_utilization, "%"},
  };
  // Contributors: what launches the most kernels, by count.
  auto top = ops.top(1000);
  std::sort(top.begin(), top.end(), [](const Contributor& a, const Contributor& b) {
    return a.count != b.count ? a.count > b.count : a.name < b.name;
  });
  if (top.size() > 5) top.resize(5);
  for (auto& t : top) t.detail = format_fixed(static_cast<double>(t.count) / c.n_steps, 1) + " kernels per step";
  f.evidence.top = top;
  std::vector<int64_t> per_step;
  for (const auto& s : c.step_idle) per_step.push_back(s[cause]);
  f.evidence.ranges = worst_steps(c, per_step, 3, "idle while launching");
  f.fix.text = "Launch less: capture the step into a CUDA graph (torch.compile mode=\"reduce-overhead\" does it "
               "for you), fuse kernels, use fused/foreach optimizers, or give each kernel more work with a larger batch.";
  f.fix.code =
      "model = torch.compile(model, mode=\"reduce-overhead\")   # CUDA graphs + fusion\n"
      "optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)\n"
      "\n"
      "# or capture a static-shape step by hand:\n"
      "g = torch.cuda.CUDAGraph()\n"
      "with torch.cuda.graph(g):\n"
      "    static_loss = train_step(static_x, static_y)\n"
      "for x, y in loader:\n"
      "    static_x.copy_(x)\n"
      "    static_y.copy_(y)\n"
      "    g.replay()\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
