// A job whose step times never settle still gets its control stretch, 50 steps
// after the warm-up at the latest. Its own binary: the schedule's state is process-wide.
#include <gtest/gtest.h>

#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(ScheduleSettle, StepsThatNeverAgreeWaitFiftyStepsAtMost) {
  Config c;
  c.control_warmup_steps = 3;
  c.control_steps = 2;
  c.control_min_ms = 0;
  uint64_t at = 1000 * kMs;
  schedule::begin(c, at);
  int first_untraced = 0;
  for (int i = 1; i <= 60 && !first_untraced; ++i) {
    at += (i % 2 ? 10 : 20) * kMs;  // alternating 10 and 20 ms: never within 25 %
    if (!schedule::on_step_boundary(c, at)) first_untraced = i + 1;
  }
  EXPECT_EQ(first_untraced, 3 + 50 + 1);
}

}  // namespace
}  // namespace gpuscope::collector
