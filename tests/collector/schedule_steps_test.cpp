// A window of torch steps (`gpuscope record --steps A-B`, GPUSCOPE_TRACE_STEPS):
// steps A to B traced, numbered from 0 as the recording numbers them, the
// others not, switched at step boundaries only. Its own binary: the
// schedule's state is process-wide.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "collector/config.h"
#include "collector/schedule.h"
#include "tests/collector/step_boundaries.h"
#include "trace_formats/common/steps_window.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

TEST(ScheduleSteps, ParsedAndReadFromTheEnvironment) {
  uint64_t first = 7, last = 7;
  EXPECT_TRUE(parse_steps_window("20-29", first, last));
  EXPECT_EQ(first, 20u);
  EXPECT_EQ(last, 29u);
  EXPECT_TRUE(parse_steps_window("5-", first, last));
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(last, UINT64_MAX);
  for (const char* bad : {"", "5", "-5", "9-3", "a-b", "1-2-3", " 1-2", "1-2x", "99999999999999-"}) {
    first = last = 7;
    EXPECT_FALSE(parse_steps_window(bad, first, last)) << bad;
    EXPECT_EQ(first, 7u) << bad;
  }
  unsetenv("GPUSCOPE_TRACE");
  setenv("GPUSCOPE_TRACE_STEPS", "10-19", 1);
  Config c = load_config();
  EXPECT_TRUE(c.steps_window);
  EXPECT_FALSE(c.control());          // the window replaces the control stretch
  EXPECT_TRUE(c.finalize_when_off);  // CUPTI torn down outside it
  EXPECT_TRUE(schedule::scheduled(c));
  EXPECT_FALSE(c.step_in_window(9));
  EXPECT_TRUE(c.step_in_window(10));
  EXPECT_TRUE(c.step_in_window(19));
  EXPECT_FALSE(c.step_in_window(20));
  setenv("GPUSCOPE_TRACE_STEPS", "ten", 1);  // said on stderr, ignored
  EXPECT_FALSE(load_config().steps_window);
  unsetenv("GPUSCOPE_TRACE_STEPS");
  EXPECT_FALSE(load_config().steps_window);
}

// Steps of 10 ms, window 5-9: untraced from the start, traced from the
// boundary that ends step 4 to the one that ends step 9, untraced after,
// never switched by time, and the plugin told each switch.
TEST(ScheduleSteps, OnlyTheWindowsStepsAreTraced) {
  Config c;
  c.control_steps = 0;
  c.steps_window = true;
  c.steps_first = 5;
  c.steps_last = 9;
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(c, t0);
  EXPECT_FALSE(schedule::traced());  // step 0 is outside the window
  static std::vector<int> plugin_told;
  schedule::expect_steps([](int on) { plugin_told.push_back(on); });
  const std::vector<int> traced = testing::run_step_boundaries(c, t0, 20);
  // Boundary i ends step i-1 and says whether step i runs traced.
  std::vector<int> want(20, 0);
  for (int step = 5; step <= 9; ++step) want[static_cast<size_t>(step - 1)] = 1;
  EXPECT_EQ(traced, want);
  EXPECT_EQ(plugin_told, (std::vector<int>{0, 1, 0}));
  schedule::on_tick(c, t0 + 5000 * kMs);  // no steps for a long time: nothing switches by time
  EXPECT_FALSE(schedule::traced());
  auto windows = schedule::take_windows(true, t0 + 6000 * kMs);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].start, t0 + 50 * kMs);  // the end of step 4
  EXPECT_GE(windows[0].end, t0 + 100 * kMs);   // the end of step 9 (and the switch's own time)
  EXPECT_LT(windows[0].end, t0 + 110 * kMs);
}

}  // namespace
}  // namespace gpuscope::collector
