// `gpuscope try`'s numbers (docs/try.md): where a run's step times settle
// after its warm-up, and how a variant's steps compare with the baseline's
// (regress/'s rank test, as `gpuscope diff` uses it, plus the rounds' pair ratios).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
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

// When a variant's rounds disagree: their savings spread over more than this
// many points of the job's step gets more rounds (docs/try.md, "Extra rounds").
// The GPU check holds try to 3 points of the same fix timed by hand; rounds
// within 4 points put their median within 2 of any of them, and a CPU or GPU
// that only jitters (ResNet-50's amp and channels-last on the H100: 1-2 points)
// stays under it, while one round far off (+33.3 among +48.9 and +50.5) does not.
inline constexpr double kSpreadLimitPts = 4.0;
// A round is an outlier when its saving is this many robust deviations
// (1.4826 x the median absolute deviation) from the rounds' median, and
// more than half the spread limit from it.
inline constexpr double kOutlierDeviations = 3.0;

struct Comparison {
  double saving_pct = 0;            // median over rounds of (1 - variant/baseline) of round medians, in %
  double low_pct = 0, high_pct = 0;  // the smallest and largest of the rounds' savings
  double p_value = 1;               // one-sided Mann-Whitney on the steady steps of the rounds that agree, in the saving's direction
  bool significant = false;         // p < alpha and every round that agrees saves (or costs) the same way
  std::vector<std::optional<double>> round_savings;  // by round; nullopt where either side has no steps
  std::vector<size_t> outliers;     // rounds (0-based) whose saving is far from the others': left out of p
  double kept_low_pct = 0, kept_high_pct = 0;  // the range of the other rounds
  size_t kept = 0;                  // rounds paired and not outliers
};

// `base_rounds` and `rounds`: the steady step times of each round, by round
// (a round missing on either side is skipped in the pair ratios). Each
// variant run is paired with the baseline run of its round, the one just
// before it (rounds alternate), so drifts of the machine cancel; the saving
// is the median of these paired savings, robust to a round far off, and the
// steps of an outlier round (both sides) are left out of the rank test.
Comparison compare(const std::vector<std::vector<double>>& base_rounds, const std::vector<std::vector<double>>& rounds,
                   double alpha);

// The rounds whose saving is far from the others' (kOutlierDeviations), 0-based
// indices into `savings`; none with fewer than 3.
std::vector<size_t> outlier_rounds(const std::vector<double>& savings);

// Why this variant needs more rounds, "" when it does not: after `wanted`
// rounds, its rounds that agree spread over more than kSpreadLimitPts, or
// fewer than `wanted` rounds agree (the others were outliers).
std::string more_rounds_why(const Comparison& c, size_t wanted);

}  // namespace gpuscope::cli::try_stats
