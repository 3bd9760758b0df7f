// exposed-communication: collective kernels that run while no compute does.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "communication not overlapped by compute, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kExposedCommunicationRule = {
    "exposed-communication",
    "Communication is not hidden behind compute",
    "NCCL kernel time during which no compute kernel, copy or memset runs (the breakdown's communication "
    "category).",
    "Exposed communication time per step, at most the step's compute kernel time: overlapped with backward "
    "(gradient buckets reduced as soon as they are ready) it costs nothing.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const int64_t exposed = c.breakdown.communication;
  const int64_t saving = std::min(exposed, c.breakdown.kernel);
  if (c.pct_of_step(saving) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kExposedCommunicationRule, c, static_cast<double>(saving));
  Tally by;
  int64_t comm = 0;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    if (!c.kc(k.name).has(kCommunication)) continue;
    comm += k.dur;
    by.add(short_kernel_name(c.m.str(k.name)), k.dur, 1);
  }
  f.evidence.summary = ms(c.ms_per_step(exposed)) + " per step of NCCL communication (of " + ms(c.ms_per_step(comm)) +
                       ") runs with no compute beside it.";
  f.evidence.metrics = {
      {"exposed_communication_ms_per_step", c.ms_per_step(exposed), "ms"},
      {"communication_ms_per_step", c.ms_per_step(comm), "ms"},
      {"compute_ms_per_step", c.ms_per_step(c.breakdown.kernel), "ms"},
  };
  f.evidence.top = by.top(5);
  std::vector<int64_t> per_step;
  for (const auto& b : c.step_breakdown) per_step.push_back(b.communication);
  f.evidence.ranges = worst_steps(c, per_step, 3, "of exposed communication");
  f.fix.text = "Let gradient all-reduce overlap with backward: DDP buckets (smaller first buckets, "
               "gradient_as_bucket_view, static_graph), no all-reduce on accumulation micro-steps, FSDP prefetching.";
  f.fix.code =
      "model = torch.nn.parallel.DistributedDataParallel(\n"
      "    model, device_ids=[local_rank], bucket_cap_mb=25,\n"
      "    gradient_as_bucket_view=True, static_graph=True)\n"
      "with model.no_sync():            # accumulation micro-steps: no all-reduce\n"
      "    loss_fn(model(x), y).backward()\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
