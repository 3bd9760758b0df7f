// host-sync: the CPU waits for the GPU inside the step, so the GPU queue runs dry.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "GPU idle after host synchronizations, share of step time, to report"},
    {"kSyncToleranceUs", static_cast<double>(kSyncToleranceNs) / 1000, "us",
     "a wait that returns this long before the GPU runs dry still counts as the cause"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kHostSyncRule = {
    "host-sync",
    "Host synchronizations inside the step stall the GPU",
    "GPU idle gaps that begin while the CPU is blocked in a wait (cudaStreamSynchronize, cudaDeviceSynchronize, "
    "cudaEventSynchronize, a synchronous cudaMemcpy; CUPTI synchronization records) which returns inside the gap: "
    "the CPU had nothing queued when the GPU finished. .item(), .cpu(), .tolist(), print(tensor) and "
    "torch.cuda.synchronize() cause them.",
    "GPU idle time after those waits per step: without the wait the CPU would have queued the next kernels "
    "while the GPU was still busy.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto cause = static_cast<size_t>(IdleCause::kHostSync);
  const int64_t idle = c.idle_by_cause[cause];
  if (c.pct_of_step(idle) < kMinSavingPct) return std::nullopt;
  Tally by;
  for (const Gap& g : c.gaps) {
    if (g.cause != IdleCause::kHostSync) continue;
    std::string api = g.blocker == kNone ? "synchronization" : c.name(c.m.apis[g.blocker].name);
    std::string op = g.blocker == kNone ? "" : user_op_name(c, c.m.apis[g.blocker].corr);
    by.add(op.empty() ? api : op + " (" + api + ")", g.length(), 1);
  }
  int64_t waits = 0, wait_ns = 0;
  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    if (a.cls == ApiClass::kSync || a.cls == ApiClass::kMemcpySync) {
      ++waits;
      wait_ns += a.dur;
    }
  }
  Finding f = make_finding(kHostSyncRule, c, static_cast<double>(idle));
  const double n = static_cast<double>(c.gaps_by_cause[cause]) / c.n_steps;
  f.evidence.summary = format_fixed(n, 1) + " times per step the CPU waited for the GPU and then left it idle, " +
                       ms(c.ms_per_step(idle)) + " per step (" + pct(f.saving_pct) + " of step time) in total.";
  f.evidence.metrics = {
      {"stalling_syncs_per_step", n, "count"},
      {"gpu_idle_after_sync_ms_per_step", c.ms_per_step(idle), "ms"},
      {"sync_calls_per_step", static_cast<double>(waits) / c.n_steps, "count"},
      {"cpu_blocked_ms_per_step", c.ms_per_step(wait_ns), "ms"},
  };
  f.evidence.top = by.top(5);
  for (auto& t : f.evidence.top) t.detail = format_fixed(static_cast<double>(t.count) / c.n_steps, 1) + " per step";
  for (const Gap& g : c.largest[cause]) {
    std::string what = g.blocker == kNone ? "a synchronization" : c.name(c.m.apis[g.blocker].name);
    f.evidence.ranges.push_back(gap_range(g, "GPU idle after " + what + ": " + ns_text(static_cast<double>(g.length()))));
    if (f.evidence.ranges.size() >= 5) break;
  }
  f.fix.text = "Keep values on the GPU and read them rarely: accumulate losses and metrics as tensors and call "
               ".item() once every N steps; drop torch.cuda.synchronize() from the loop; avoid ops with "
               "data-dependent shapes (nonzero, boolean masks) in the step.";
  f.fix.code =
      "running = torch.zeros((), device=\"cuda\")\n"
      "for step, (x, y) in enumerate(loader):\n"
      "    loss = train_step(x, y)\n"
      "    running += loss.detach()          # no .item(): stays on the GPU\n"
      "    if step % 100 == 99:\n"
      "        print(f\"loss {running.item() / 100:.4f}\")   # one sync per 100 steps\n"
      "        running.zero_()\n"
      "\n"
      "# find the remaining hidden syncs:\n"
      "torch.cuda.set_sync_debug_mode(\"warn\")\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
