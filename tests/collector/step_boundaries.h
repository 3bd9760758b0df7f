// The schedule driven through steps as the torch plugin drives it (tests of
// the control stretch and of the steps window).
#pragma once

#include <cstdint>
#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"

namespace gpuscope::collector::testing {

// Boundaries 1..n every 10 ms from t0, a tick 5 ms after each; per boundary,
// whether the step it starts runs traced (1) or not (0).
inline std::vector<int> run_step_boundaries(const Config& c, uint64_t t0, int n) {
  constexpr uint64_t kStepNs = 10'000'000, kTickNs = 5'000'000;
  std::vector<int> traced;
  for (int i = 1; i <= n; ++i) {
    const uint64_t at = t0 + static_cast<uint64_t>(i) * kStepNs;
    traced.push_back(schedule::on_step_boundary(c, at) ? 1 : 0);
    schedule::on_tick(c, at + kTickNs);
  }
  return traced;
}

}  // namespace gpuscope::collector::testing
