// straggler: one rank's own work per step (data, compute) takes longer than the
// others', so every other rank waits for it in the collectives of each step.
#include <algorithm>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule_util.h"
#include "analyzer/steps.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 5.0;
constexpr double kMinWaitExplained = 0.5;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "the last rank's extra own time over the next slowest rank, share of step time, to report"},
    {"kMinWaitExplained", kMinWaitExplained, "fraction",
     "the other ranks' extra wait in collectives over the last rank's, as a share of its extra time, at least"},
};

std::optional<Finding> evaluate(const CrossRankInput& in);

}  // namespace

extern const CrossRankRule kStragglerRule = {
    "straggler",
    "One rank is slower and the others wait for it",
    "In a recording with several ranks, the rank with the most own time in its median step (step time less its "
    "wait in collectives: loading data, computing, anything else), when it exceeds the next slowest rank's by at "
    "least kMinSavingPct of the step and the other ranks wait at least kMinWaitExplained of that longer in "
    "collectives than it does. Where its extra time goes: its mean data, compute and other time per step against "
    "the other ranks' median.",
    "Its own time per (median) step minus the next slowest rank's: with it as fast as the others, every rank's "
    "step shortens by that much (the others stop waiting for it).",
    kThresholds,
    evaluate,
};

namespace {

struct Part {
  const char* name;
  double RankSummary::*field;
  const char* what;
};

constexpr Part kParts[] = {
    {"data", &RankSummary::data_ms_per_step, "loading data (DataLoader)"},
    {"compute", &RankSummary::compute_ms_per_step, "computing (GPU work, torch ops, CUDA calls)"},
    {"other", &RankSummary::other_ms_per_step, "outside any recorded op or DataLoader wait (Python, CPU contention)"},
};

std::optional<Finding> evaluate(const CrossRankInput& in) {
  const RankSummary* s = last_arrival(in.ranks);
  if (!s) return std::nullopt;
  double next = 0, others_wait = 0;
  int others = 0;
  for (const auto& r : in.ranks)
    if (&r != s && r.steps > 0) {
      next = std::max(next, r.own_ms_median);
      others_wait += r.collective_ms_median;
      ++others;
    }
  others_wait /= std::max(1, others);
  const double extra = s->own_ms_median - next;
  if (extra <= 0 || others_wait - s->collective_ms_median < kMinWaitExplained * extra) return std::nullopt;
  Finding f = make_cross_rank_finding(kStragglerRule, in.analysis, extra);
  if (f.saving_pct < kMinSavingPct) return std::nullopt;

  // Where its extra time goes: each part against the other ranks' median.
  const Part* worst = nullptr;
  double worst_delta = 0;
  std::vector<std::pair<double, const Part*>> deltas;
  for (const Part& p : kParts) {
    std::vector<double> v;
    for (const auto& r : in.ranks)
      if (&r != s && r.steps > 0) v.push_back(r.*p.field);
    const double d = s->*p.field - median(v);
    deltas.push_back({d, &p});
    if (d > worst_delta) worst_delta = d, worst = &p;
    f.evidence.metrics.push_back({std::string("straggler_") + p.name + "_ms_per_step", s->*p.field, "ms"});
    f.evidence.metrics.push_back({std::string("others_") + p.name + "_ms_per_step", median(v), "ms"});
  }
  std::stable_sort(deltas.begin(), deltas.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::string who = "rank " + std::to_string(s->rank) + " (pid " + std::to_string(s->pid) +
                          (s->host.empty() ? "" : ", host " + s->host) + ")";
  for (const auto& [d, p] : deltas)
    if (d > 0)
      f.evidence.top.push_back({std::string(p->what), d * static_cast<double>(s->steps), s->steps,
                                "rank " + std::to_string(s->rank) + ": " + ms(s->*p->field) + " per step, +" + ms(d) +
                                    " over the other ranks' median"});
  f.evidence.summary = "Rank " + std::to_string(s->rank) + " is the straggler: its own work takes " + ms(extra) +
                       " per step longer than the next slowest rank's" +
                       (worst ? ", mostly " + std::string(worst->what) + " (+" + ms(worst_delta) + " per step)" : "") +
                       "; the other ranks wait " + ms(others_wait) + " per step in collectives, it waits " +
                       ms(s->collective_ms_median) + " (median steps).";
  f.evidence.metrics.insert(f.evidence.metrics.begin(),
                            {{"straggler_rank", static_cast<double>(s->rank), "rank"},
                             {"straggler_pid", static_cast<double>(s->pid), "pid"},
                             {"extra_ms_per_step", extra, "ms"},
                             {"straggler_own_ms_per_step", s->own_ms_median, "ms"},
                             {"next_slowest_own_ms_per_step", next, "ms"},
                             {"straggler_collective_ms_per_step", s->collective_ms_median, "ms"},
                             {"others_collective_ms_per_step", others_wait, "ms"}});
  for (const auto& r : s->slowest) f.evidence.ranges.push_back({r.start_ns, r.end_ns, "rank " + std::to_string(s->rank) + ": " + r.label});

  const bool data = worst && worst->field == &RankSummary::data_ms_per_step;
  f.fix.text = "Make " + who + " as fast as the others: " +
               (data ? std::string("its batches arrive late, so load them in worker processes that prefetch (and check "
                                   "that its data, storage and CPU cores are like the other ranks')")
                     : std::string("give it the same amount of work (equal shards, equal sequence lengths) and the same "
                                   "hardware, and look at its own report (gpuscope analyze --rank " +
                                   std::to_string(s->rank) + ")")) +
               ". Every collective of the step waits for the last rank to arrive.";
  f.fix.code =
      "# gpuscope analyze run.db --rank " + std::to_string(s->rank) + "   # this rank's own breakdown and findings\n" +
      "loader = torch.utils.data.DataLoader(\n"
      "    dataset, batch_size=batch_size,\n"
      "    sampler=torch.utils.data.distributed.DistributedSampler(dataset),  # equal shards per rank\n"
      "    num_workers=4, pin_memory=True, prefetch_factor=4, persistent_workers=True,\n"
      ")\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
