// fused-optimizer: the optimizer updates parameters with foreach kernels, one
// pass over the parameters per arithmetic step, where a fused one makes one.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;
// torch's fused Adam/AdamW/SGD kernels read and write every parameter, grad
// and state once per step; the foreach path does it once per operation.
// Measured on the H200: fused AdamW saved 0.5-0.7 of the foreach kernel time
// (ResNet-50, GPT-2 small, a bf16 MLP); half is the estimate.
constexpr double kFusedSpeedup = 2.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kFusedSpeedup", kFusedSpeedup, "x", "assumed speedup of a fused optimizer step over its foreach kernels"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kFusedOptimizerRule = {
    "fused-optimizer",
    "The optimizer step runs as many foreach kernels",
    "Multi-tensor (foreach) kernels (multi_tensor_apply_kernel without a fused functor) that torch's optimizers "
    "launch when not asked for fused=True: Adam, AdamW, SGD and Adagrad have a fused CUDA implementation.",
    "Foreach kernel time per step x (1 - 1/kFusedSpeedup).",
    kThresholds,
    evaluate,
};

namespace {

bool foreach_kernel(std::string_view name) {
  name = name.substr(0, 400);
  return name.find("multi_tensor_apply_kernel") != std::string_view::npos &&
         name.find("Fused") == std::string_view::npos && name.find("fused") == std::string_view::npos;
}

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  int64_t foreach = 0, count = 0;
  Tally by;
  std::vector<int64_t> per_step(c.steps.size());
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    if (!foreach_kernel(c.m.str(k.name))) continue;
    foreach += k.dur;
    ++count;
    uint32_t op = c.user_op(c.op_of_corr(k.corr));
    by.add(short_kernel_name(c.m.str(k.name)), k.dur, 1, op == kNone ? "" : "from " + c.op_name(op));
    if (int s = c.step_of(k.start); s >= 0) per_step[static_cast<size_t>(s)] += k.dur;
  }
  const double saving = static_cast<double>(foreach) * (1 - 1 / kFusedSpeedup);
  if (count == 0 || c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kFusedOptimizerRule, c, saving);
  f.evidence.summary = format_fixed(static_cast<double>(count) / c.n_steps, 1) + " foreach (multi-tensor) kernels per step take " +
                       ms(c.ms_per_step(foreach)) + " per step: the optimizer passes over every parameter once per "
                       "operation instead of once.";
  f.evidence.metrics = {
      {"foreach_ms_per_step", c.ms_per_step(foreach), "ms"},
      {"foreach_kernels_per_step", static_cast<double>(count) / c.n_steps, "count"},
      {"assumed_speedup", kFusedSpeedup, "x"},
  };
  f.evidence.top = by.top(5);
  f.evidence.ranges = worst_steps(c, per_step, 3, "in foreach optimizer kernels");
  f.fix.text = "Ask the optimizer for its fused CUDA implementation (Adam, AdamW, SGD, Adagrad): one kernel "
               "updates every parameter in one pass.";
  f.fix.code = "optimizer = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
