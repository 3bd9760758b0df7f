// The control stretch waits for step times to settle: a compiled model's first
// steps (compilation), cuDNN's autotuning and a DataLoader's first batches are
// not the job's steady state. Its own binary: the schedule's state is process-wide.
#include <gtest/gtest.h>

#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

// Per step i (from 1), its duration; per boundary, whether the next step runs traced.
std::vector<int> run(const Config& c, uint64_t t0, const std::vector<uint64_t>& durations_ms) {
  std::vector<int> traced;
  uint64_t at = t0;
  for (uint64_t d : durations_ms) {
    at += d * kMs;
    traced.push_back(schedule::on_step_boundary(c, at) ? 1 : 0);
  }
  return traced;
}

TEST(ScheduleSettle, TheStretchStartsOnceTwoStepsAgree) {
  Config c;
  c.control_warmup_steps = 3;
  c.control_steps = 4;
  c.control_min_ms = 0;
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(c, t0);
  // Compilation in steps 1-2, autotuning in step 3 and 4 (30 ms then 12 ms), then 10 ms steps.
  std::vector<uint64_t> d = {30000, 2000, 30, 12, 10, 10, 10, 10, 10, 10, 10, 10, 10};
  const std::vector<int> traced = run(c, t0, d);
  // Boundary 3: steps 2 and 3 (2000, 30 ms) differ; 4: 30 and 12 differ; 5: 12 and 10 agree
  // within 25 %: steps 6-9 untraced.
  EXPECT_EQ(traced, (std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace gpuscope::collector
