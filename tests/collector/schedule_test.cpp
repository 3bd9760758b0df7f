// When the collector traces GPU activity: capture windows (--delay,
// --duration) and duty cycles (GPUSCOPE_SAMPLE_MS).
#include <gtest/gtest.h>

#include <cstdlib>

#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(Schedule, AlwaysTracedWithoutWindowOrDutyCycle) {
  Config c;
  EXPECT_TRUE(c.traced_at(0, 0));
  EXPECT_TRUE(c.traced_at(123456789 * kMs, 5));
}

TEST(Schedule, WindowBoundsTracing) {
  Config c;
  c.window_start_ns = 1000 * kMs;
  c.window_end_ns = 3000 * kMs;
  EXPECT_FALSE(c.traced_at(999 * kMs, 0));
  EXPECT_TRUE(c.traced_at(1000 * kMs, 0));
  EXPECT_TRUE(c.traced_at(3000 * kMs, 0));
  EXPECT_FALSE(c.traced_at(3001 * kMs, 0));
  c.window_end_ns = 0;  // to the end
  EXPECT_TRUE(c.traced_at(1000000 * kMs, 0));
}

TEST(Schedule, DutyCycleCountsFromTheLaterOfEpochAndWindowStart) {
  Config c;
  c.sample_on_ms = 200;
  c.sample_off_ms = 1800;
  const uint64_t epoch = 5000 * kMs;
  EXPECT_TRUE(c.traced_at(epoch, epoch));
  EXPECT_TRUE(c.traced_at(epoch + 199 * kMs, epoch));
  EXPECT_FALSE(c.traced_at(epoch + 200 * kMs, epoch));
  EXPECT_FALSE(c.traced_at(epoch + 1999 * kMs, epoch));
  EXPECT_TRUE(c.traced_at(epoch + 2000 * kMs, epoch));
  EXPECT_FALSE(c.traced_at(epoch + 2300 * kMs, epoch));
  c.window_start_ns = epoch + 100 * kMs;  // the cycle starts with the window
  EXPECT_FALSE(c.traced_at(epoch + 50 * kMs, epoch));
  EXPECT_TRUE(c.traced_at(epoch + 250 * kMs, epoch));
  EXPECT_FALSE(c.traced_at(epoch + 300 * kMs, epoch));
}

TEST(Schedule, ReadFromTheEnvironment) {
  setenv("GPUSCOPE_SAMPLE_MS", "300,2700", 1);
  setenv("GPUSCOPE_CUPTI_FINALIZE", "1", 1);
  Config c = load_config();
  EXPECT_EQ(c.sample_on_ms, 300u);
  EXPECT_EQ(c.sample_off_ms, 2700u);
  EXPECT_TRUE(c.finalize_when_off);
  setenv("GPUSCOPE_SAMPLE_MS", "300", 1);  // no off time: always on
  setenv("GPUSCOPE_CUPTI_FINALIZE", "0", 1);
  c = load_config();
  EXPECT_EQ(c.sample_off_ms, 0u);
  EXPECT_TRUE(c.traced_at(10 * kMs, 0));
  EXPECT_TRUE(c.traced_at(1000 * kMs, 0));
  EXPECT_FALSE(c.finalize_when_off);
  // Torn down by default wherever tracing switches off (the control stretch
  // too, tests/collector/schedule_control_test.cpp), and not otherwise.
  unsetenv("GPUSCOPE_CUPTI_FINALIZE");
  setenv("GPUSCOPE_CONTROL_STEPS", "0", 1);
  EXPECT_FALSE(load_config().finalize_when_off);
  setenv("GPUSCOPE_SAMPLE_MS", "300,2700", 1);
  EXPECT_TRUE(load_config().finalize_when_off);
  unsetenv("GPUSCOPE_SAMPLE_MS");
  setenv("GPUSCOPE_WINDOW_END_NS", "5000000000", 1);
  EXPECT_TRUE(load_config().finalize_when_off);
  unsetenv("GPUSCOPE_WINDOW_END_NS");
  unsetenv("GPUSCOPE_CONTROL_STEPS");
}

}  // namespace
}  // namespace gpuscope::collector

namespace gpuscope::collector {
namespace {

// A stretch ends when tracing is off: the switch's time plus how long switching
// took (here without CUPTI: microseconds; a second would mean a wrong clock).
void expect_switched_off_at(uint64_t end, uint64_t switched) {
  EXPECT_GE(end, switched);
  EXPECT_LT(end, switched + 1000 * kMs);
}

// The schedule's state is process-wide: one test walks through it all. No
// CUPTI here, so only the decisions and the stored stretches are checked.
TEST(Schedule, StepsDriveTheSwitchesAndEachStretchIsKept) {
  Config c;
  c.sample_on_ms = 100;
  c.sample_off_ms = 300;
  ASSERT_TRUE(schedule::scheduled(c));
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(c, t0);
  static std::vector<int> plugin_told;
  schedule::expect_steps([](int on) { plugin_told.push_back(on); });
  EXPECT_EQ(plugin_told, std::vector<int>{1});  // told the current state at once
  EXPECT_TRUE(schedule::traced());
  // Steps of 30 ms: the switch comes at the first step end at or after the cycle's edge.
  std::vector<bool> traced;
  for (uint64_t t = t0 + 30 * kMs; t <= t0 + 1200 * kMs; t += 30 * kMs) {
    traced.push_back(schedule::on_step_boundary(c, t));
    schedule::on_tick(c, t + kMs);  // steps keep coming: the writer leaves the switches to them
  }
  // Boundaries at 30, 60, 90 ms are on; 120 ms is past 100: off until 420 ms (400 is in the
  // next on-time), on through 480, off at 510, on at 810, 840, 870, off at 900, on again at 1200.
  std::vector<size_t> on;
  for (size_t i = 0; i < traced.size(); ++i)
    if (traced[i]) on.push_back(30 * (i + 1));
  EXPECT_EQ(on, (std::vector<size_t>{30, 60, 90, 420, 450, 480, 810, 840, 870, 1200}));
  EXPECT_EQ(plugin_told, (std::vector<int>{1, 0, 1, 0, 1, 0, 1}));  // and of every switch
  auto windows = schedule::take_windows(false, 0);
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].start, t0);
  expect_switched_off_at(windows[0].end, t0 + 120 * kMs);
  EXPECT_EQ(windows[1].start, t0 + 420 * kMs);
  expect_switched_off_at(windows[1].end, t0 + 510 * kMs);
  EXPECT_EQ(windows[2].start, t0 + 810 * kMs);
  expect_switched_off_at(windows[2].end, t0 + 900 * kMs);
  // No more steps: after a whole period without one, the writer switches by time.
  schedule::on_tick(c, t0 + 1300 * kMs);  // 100 ms after the last step: still waiting
  EXPECT_TRUE(schedule::traced());
  schedule::on_tick(c, t0 + 1700 * kMs);  // 500 ms after: 1700 % 400 = 100, off-time
  EXPECT_FALSE(schedule::traced());
  windows = schedule::take_windows(true, t0 + 1800 * kMs);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].start, t0 + 1200 * kMs);
  expect_switched_off_at(windows[0].end, t0 + 1700 * kMs);
}

}  // namespace
}  // namespace gpuscope::collector
