// collective-wait: the ranks of a distributed job wait in collectives for the
// last one to arrive, because their own work per step is uneven.
#include <algorithm>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 5.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "mean wait for the last arrival over all ranks, share of step time, to report"},
};

std::optional<Finding> evaluate(const CrossRankInput& in);

}  // namespace

extern const CrossRankRule kCollectiveWaitRule = {
    "collective-wait",
    "Ranks wait in collectives for the last one to arrive",
    "In a recording with several ranks, time each rank waits in collectives for the last rank to arrive: as "
    "every rank leaves the collectives together, the last arrival's own time in its median step (step time less "
    "the wait in collectives) less the rank's own.",
    "The mean of that wait over all ranks: with the work spread evenly, every rank arrives together and the "
    "step shortens by the slowest rank's own time less the mean (the straggler rule names the slowest rank).",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const CrossRankInput& in) {
  const RankSummary* last = last_arrival(in.ranks);
  if (!last) return std::nullopt;
  double all = 0, others = 0;
  int n_all = 0, n_others = 0;
  std::vector<std::pair<double, const RankSummary*>> waits;
  for (const auto& r : in.ranks) {
    if (r.steps == 0) continue;
    // Every rank leaves the collectives together: it waited as much longer
    // than the last arrival as its own work was shorter.
    const double w = last->own_ms_median - r.own_ms_median;
    all += w, ++n_all;
    if (&r != last) others += w, ++n_others;
    waits.push_back({w, &r});
  }
  all /= std::max(1, n_all);
  others /= std::max(1, n_others);
  Finding f = make_cross_rank_finding(kCollectiveWaitRule, in.analysis, all);
  if (f.saving_pct < kMinSavingPct) return std::nullopt;
  std::stable_sort(waits.begin(), waits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [w, r] : waits)
    if (w > 0)
      f.evidence.top.push_back({"rank " + std::to_string(r->rank), w * static_cast<double>(r->steps), r->steps,
                              "waits " + ms(w) + " per step for the last arrival (" + ms(r->collective_ms_median) +
                                  " in collectives in its median step, pid " + std::to_string(r->pid) + ")"});
  // Ranks that wait at least half the longest wait, against those that arrive (nearly) last.
  const double longest = waits.empty() ? 0 : waits.front().first;
  std::string waiting, late;
  double waiting_ms = 0;
  int n_waiting = 0;
  for (const auto& [w, r] : waits) {
    std::string& list = w >= 0.5 * longest ? waiting : late;
    list += (list.empty() ? "" : ", ") + std::to_string(r->rank);
    if (w >= 0.5 * longest) waiting_ms += w, ++n_waiting;
  }
  waiting_ms /= std::max(1, n_waiting);
  f.evidence.summary = "Rank(s) " + waiting + " wait " + ms(waiting_ms) + " per step in collectives for the last to arrive (rank(s) " +
                       late + "; rank " + std::to_string(last->rank) + "'s own work per step is the longest); over all ranks " +
                       ms(all) + " per step.";
  f.evidence.metrics = {
      {"others_wait_ms_per_step", others, "ms"},
      {"mean_wait_ms_per_step", all, "ms"},
      {"last_arrival_rank", static_cast<double>(last->rank), "rank"},
      {"last_arrival_collective_ms_per_step", last->collective_ms_median, "ms"},
      {"ranks", static_cast<double>(n_all), "count"},
  };
  for (const auto& [w, r] : waits)
    if (r != last && !r->slowest.empty()) {
      const auto& x = r->slowest.front();
      f.evidence.ranges.push_back({x.start_ns, x.end_ns, "rank " + std::to_string(r->rank) + ": " + x.label});
    }
  if (f.evidence.ranges.empty())
    for (const auto& x : last->slowest) f.evidence.ranges.push_back({x.start_ns, x.end_ns, "rank " + std::to_string(last->rank) + ": " + x.label});
  f.fix.text = "Even out the ranks' own work per step so they reach each collective together: equal data shards and "
               "batch shapes, the same input pipeline speed on every rank (see the straggler finding and "
               "`gpuscope analyze --rank N` of the slowest rank), and no rank-0-only work (logging, checkpoints, "
               "evaluation) inside the step.";
  f.fix.code =
      "sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)  # equal shards\n"
      "loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler,\n"
      "                                     num_workers=4, pin_memory=True, persistent_workers=True)\n"
      "if rank == 0 and step % log_every == 0:  # rank-0-only work makes the others wait: keep it rare\n"
      "    log(metrics)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
