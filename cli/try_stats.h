// `gpuscope try`'s numbers (docs/try.md): where a run's step times settle
// after its warm-up, and how a variant's steps compare with the baseline's
// (regress/'s rank test, as `gpuscope diff` uses it, plus the rounds' pair ratios).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace gpuscope::cli::try_stats {

// Step times from step boundaries (ns, ascending): one fewer than boundaries, in ms.
std::vector<double> step_ms(const std::vector<long long>& boundaries_ns);

// The first step index from which the times have settled: the first window
// of `window` steps whose median is within `tolerance` (a fraction) of the
// next window's median, after the last step of that window more than 25 %
// off the next window's median. nullopt while no such window is seen yet. torch.compile's
// and cudnn.benchmark's first steps are slow; a run that speeds up or slows
// down step after step has not settled.
std::optional<size_t> settled_from(const std::vector<double>& ms, size_t window, double tolerance);

// The window used for `steps` steady steps: 5, fewer for very short runs (at least 3).
size_t window_for(size_t steps);

struct Comparison {
  double saving_pct = 0;            // median over rounds of (1 - variant/baseline) of round medians, in %
  double low_pct = 0, high_pct = 0;  // the smallest and largest of the rounds' savings
  double p_value = 1;               // one-sided Mann-Whitney on all steady steps, in the saving's direction
  bool significant = false;         // p < alpha and every round saves (or costs) the same way
};

// `base_rounds` and `rounds`: the steady step times of each round, by round
// (a round missing on either side is skipped in the pair ratios).
Comparison compare(const std::vector<std::vector<double>>& base_rounds, const std::vector<std::vector<double>>& rounds,
                   double alpha);

}  // namespace gpuscope::cli::try_stats
