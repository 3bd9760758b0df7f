// dataloader-stall: the GPU idles while the training loop waits for the next batch.
#include "analyzer/rules/rule_util.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "GPU idle during DataLoader waits, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kDataloaderStallRule = {
    "dataloader-stall",
    "The GPU waits for the DataLoader",
    "GPU idle gaps inside a step during which the training thread was inside a DataLoader range "
    "(`enumerate(DataLoader)#...__next__` from the torch plugin, or an NVTX range naming a data loader) "
    "for at least half of the gap.",
    "GPU idle time during DataLoader waits per step: with enough workers prefetching, the next batch is "
    "ready when asked for and that idle time disappears.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto cause = static_cast<size_t>(IdleCause::kDataLoader);
  const int64_t idle = c.idle_by_cause[cause];
  if (c.pct_of_step(idle) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kDataloaderStallRule, c, static_cast<double>(idle));

  const int64_t wait = c.dataloader.intersect(c.step_set).total();
  Tally names;
  for (const auto& r : c.m.ranges)
    if ((r.source == schema::range_source::dataloader || is_dataloader_range_name(c.m.str(r.name))) &&
        c.step_of(r.start) >= 0)
      names.add(c.name(r.name), r.end - r.start);
  std::vector<int64_t> per_step;
  for (const auto& s : c.step_idle) per_step.push_back(s[cause]);

  f.evidence.summary = "The GPU sat idle " + ms(c.ms_per_step(idle)) + " per step (" + pct(f.saving_pct) +
                       " of step time) while the training loop waited " + ms(c.ms_per_step(wait)) +
                       " per step for the next batch.";
  f.evidence.metrics = {
      {"dataloader_wait_ms_per_step", c.ms_per_step(wait), "ms"},
      {"gpu_idle_during_wait_ms_per_step", c.ms_per_step(idle), "ms"},
      {"waits_with_gpu_idle", static_cast<double>(c.gaps_by_cause[cause]), "count"},
      {"step_ms_mean", c.mean_step_ms(), "ms"},
  };
  f.evidence.top = names.top(5);
  for (const Gap& g : c.largest[cause]) f.evidence.ranges.push_back(gap_range(g, "GPU idle, waiting for data: " + ns_text(static_cast<double>(g.length()))));
  auto worst = worst_steps(c, per_step, 3, "idle waiting for data");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());

  f.fix.text = "Load batches in parallel worker processes that prefetch ahead of the training loop, "
               "and pin their memory so the host-to-device copy is fast and asynchronous.";
  f.fix.code =
      "loader = torch.utils.data.DataLoader(\n"
      "    dataset, batch_size=batch_size, shuffle=True,\n"
      "    num_workers=8,            # about the CPU cores per GPU; raise until the wait is gone\n"
      "    pin_memory=True,          # page-locked batches: fast, asynchronous copies\n"
      "    prefetch_factor=4,        # batches each worker keeps ready\n"
      "    persistent_workers=True,  # keep workers alive between epochs\n"
      ")\n"
      "for x, y in loader:\n"
      "    x = x.to(\"cuda\", non_blocking=True)\n"
      "    y = y.to(\"cuda\", non_blocking=True)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
