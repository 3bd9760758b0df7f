// The statistics behind `gpuscope diff`: is the new run's step time shifted
// relative to the base run's, and by how much? Step times are skewed and carry
// outliers (GC pauses, checkpoint steps, a slow DataLoader batch), so the test
// is rank based: Mann-Whitney U with the normal approximation, tie and
// continuity corrections, and the Hodges-Lehmann estimate of the shift on log
// times (a ratio). Deterministic: no resampling.
#pragma once

#include <cstddef>
#include <span>

namespace gpuscope::regress {

struct MannWhitney {
  double u = 0;          // pairs (x from `next`, y from `base`) with x > y, ties count half
  double z = 0;          // standardized U (without continuity correction); > 0: next larger
  double p_greater = 1;  // one-sided: next is stochastically larger
  double p_less = 1;     // one-sided: next is stochastically smaller
  double p_two_sided() const;
};

// Any sizes; empty input gives p = 1.
MannWhitney mann_whitney(std::span<const double> base, std::span<const double> next);

struct ShiftTest {
  size_t n_base = 0, n_new = 0;
  double p_slower = 1, p_faster = 1;  // one-sided Mann-Whitney p-values on step times
  double shift = 0;                   // Hodges-Lehmann: typical new/base ratio minus 1 (0.1 = 10 % slower)
  double ci_low = 0, ci_high = 0;     // 95 % confidence interval of `shift`
};

// Step times must be positive. Large inputs are thinned to evenly spaced order
// statistics for the pairwise estimate (the test itself uses every step).
ShiftTest shift_test(std::span<const double> base_ms, std::span<const double> new_ms);

// The gate: significant at `alpha` AND the estimated shift beyond `threshold`.
enum class Direction { kSlower, kFaster, kSmallSignificant, kNone };
Direction classify(const ShiftTest& t, double alpha, double threshold);
inline bool is_regression(const ShiftTest& t, double alpha, double threshold) {
  return classify(t, alpha, threshold) == Direction::kSlower;
}

double median_of(std::span<const double> v);
double percentile_of(std::span<const double> v, double p);  // nearest rank, as the analyzer

}  // namespace gpuscope::regress
