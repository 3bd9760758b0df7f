// The control stretch (Config::control, `gpuscope record`'s default): after
// the warm-up steps, N steps and at least MIN_MS run untraced, then the rest
// of the job is traced. Its own binary: the schedule's state is process-wide.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"
#include "tests/collector/step_boundaries.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(ScheduleControl, ReadFromTheEnvironment) {
  unsetenv("GPUSCOPE_CONTROL_STEPS");
  unsetenv("GPUSCOPE_TRACE");
  Config c = load_config();
  EXPECT_TRUE(c.control());
  EXPECT_EQ(c.control_warmup_steps, 3u);
  EXPECT_EQ(c.control_steps, 8u);
  EXPECT_EQ(c.control_min_ms, 200u);
  EXPECT_TRUE(c.finalize_when_off);
  setenv("GPUSCOPE_CONTROL_STEPS", "2,5,50", 1);
  c = load_config();
  EXPECT_EQ(c.control_warmup_steps, 2u);
  EXPECT_EQ(c.control_steps, 5u);
  EXPECT_EQ(c.control_min_ms, 50u);
  setenv("GPUSCOPE_CONTROL_STEPS", "0", 1);  // record --full
  EXPECT_FALSE(load_config().control());
  EXPECT_FALSE(load_config().finalize_when_off);
  unsetenv("GPUSCOPE_CONTROL_STEPS");
  setenv("GPUSCOPE_TRACE", "cuda,nvtx", 1);  // no steps without the torch plugin
  EXPECT_FALSE(load_config().control());
  unsetenv("GPUSCOPE_TRACE");
  setenv("GPUSCOPE_SAMPLE_MS", "300,2700", 1);  // a duty cycle replaces it
  EXPECT_FALSE(load_config().control());
  unsetenv("GPUSCOPE_SAMPLE_MS");
}

// Steps of 10 ms, 3 warm-up steps, then 8 untraced steps and at least 100 ms:
// the stretch lasts 10 steps (100 ms), is never switched by time, and the rest
// is traced.
TEST(ScheduleControl, WarmupThenUntracedStepsThenTraced) {
  Config c;
  c.control_warmup_steps = 3;
  c.control_steps = 8;
  c.control_min_ms = 100;
  ASSERT_TRUE(schedule::scheduled(c));
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(c, t0);
  static std::vector<int> plugin_told;
  schedule::expect_steps([](int on) { plugin_told.push_back(on); });
  const std::vector<int> traced = testing::run_step_boundaries(c, t0, 30);
  // Boundary i says whether step i+1 (counting from 1) runs traced: steps 4-13 untraced.
  std::vector<int> want(30, 1);
  for (int i = 3; i < 13; ++i) want[static_cast<size_t>(i - 1)] = 0;
  EXPECT_EQ(traced, want);
  EXPECT_EQ(plugin_told, (std::vector<int>{1, 0, 1}));
  // Without steps for a long time nothing switches by time.
  schedule::on_tick(c, t0 + 5000 * kMs);
  EXPECT_TRUE(schedule::traced());
  auto windows = schedule::take_windows(true, t0 + 6000 * kMs);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].start, t0);
  EXPECT_EQ(windows[1].start, t0 + 130 * kMs);  // the end of step 13
  // No CUPTI in this test: nothing was measured between drains.
  EXPECT_TRUE(schedule::take_untraced().empty());
}

}  // namespace
}  // namespace gpuscope::collector
