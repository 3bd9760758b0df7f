// Captures on demand (GPUSCOPE_TRACE_STEPS=on-demand, collector/ondemand.h):
// dormant until a capture begins at a step boundary, then the control stretch,
// the traced steps, done; and the slow-step rule with its cooldown. Its own
// binary: the schedule's state is process-wide.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/emit.h"
#include "collector/schedule.h"
#include "trace_formats/common/steps_window.h"

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMs = 1000000;

int g_attention_calls = 0;
std::vector<int> g_plugin_told;

TEST(ScheduleOnDemand, ReadFromTheEnvironment) {
  unsetenv("GPUSCOPE_TRACE");
  setenv("GPUSCOPE_TRACE_STEPS", kOnDemandSteps, 1);
  const Config c = load_config();
  EXPECT_TRUE(c.on_demand);
  EXPECT_FALSE(c.steps_window);
  EXPECT_FALSE(c.control());          // each capture runs its own control stretch
  EXPECT_TRUE(c.switches());
  EXPECT_TRUE(c.finalize_when_off);  // CUPTI torn down after each capture
  EXPECT_EQ(c.control_steps, 8u);    // the control stretch each capture runs first
  unsetenv("GPUSCOPE_TRACE_STEPS");
  EXPECT_FALSE(load_config().on_demand);
}

// One test, in order: the schedule is process-wide.
TEST(ScheduleOnDemand, DormantCaptureDormantAndTheSlowStepRule) {
  Config c;
  c.on_demand = true;
  uint64_t t = 1000 * kMs;
  schedule::begin(c, t);
  schedule::set_attention_hook([] { ++g_attention_calls; });
  schedule::expect_steps([](int on) { g_plugin_told.push_back(on); });
  EXPECT_EQ(g_plugin_told, std::vector<int>{0});  // the op callback off from the start
  EXPECT_FALSE(schedule::traced());
  const auto step = [&](uint64_t ms) {
    t += ms * kMs;
    const bool traced = schedule::on_step_boundary(c, t);
    schedule::on_tick(c, t + kMs);
    return traced;
  };
  // Dormant: steps counted, nothing traced or recorded.
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(step(10));
  EXPECT_EQ(schedule::steps_ended(), 5u);
  EXPECT_FALSE(enabled());
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::idle);

  // A capture from the next boundary: 2 control steps, then 3 traced.
  schedule::CapturePlan plan;
  plan.steps = 3;
  plan.control_steps = 2;
  std::string why;
  ASSERT_TRUE(schedule::capture_begin(plan, why)) << why;
  EXPECT_FALSE(schedule::capture_begin(plan, why));  // one at a time
  EXPECT_NE(why.find("already"), std::string::npos);
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::waiting);
  EXPECT_FALSE(enabled());
  EXPECT_FALSE(step(10));  // boundary 6: recording starts, control step 6 runs untraced
  EXPECT_TRUE(enabled());
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::control);
  EXPECT_FALSE(step(10));  // ends step 6 (control)
  const uint64_t traced_from = t + 10 * kMs;
  EXPECT_TRUE(step(10));   // ends step 7 (control): steps 8, 9, 10 traced
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::traced);
  EXPECT_TRUE(step(10));
  EXPECT_TRUE(step(10));
  EXPECT_EQ(g_attention_calls, 0);
  EXPECT_FALSE(step(10));  // ends step 10: done, recording off, the writer's thread woken
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::done);
  EXPECT_FALSE(enabled());
  EXPECT_EQ(g_attention_calls, 1);
  uint64_t first = 0, last = 0;
  schedule::captured_steps(first, last);
  EXPECT_EQ(first, 8u);
  EXPECT_EQ(last, 10u);
  EXPECT_EQ(g_plugin_told, (std::vector<int>{0, 1, 0}));
  auto windows = schedule::take_windows(false, t);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].start, traced_from);  // the boundary that ended step 7
  EXPECT_GE(windows[0].end, t);
  EXPECT_FALSE(step(10));  // done until the file is closed: nothing happens
  EXPECT_FALSE(schedule::capture_begin(plan, why));
  schedule::capture_reset();
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::idle);

  // A start step that has passed is refused; one ahead waits for it.
  plan.start_step = 3;
  EXPECT_FALSE(schedule::capture_begin(plan, why));
  EXPECT_NE(why.find("has passed"), std::string::npos) << why;
  plan.start_step = schedule::steps_ended() + 2;
  plan.control_steps = 0;
  plan.steps = 1;
  ASSERT_TRUE(schedule::capture_begin(plan, why)) << why;
  EXPECT_FALSE(step(10));
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::waiting);
  EXPECT_TRUE(step(10));  // the start step: no control stretch, traced at once
  EXPECT_FALSE(step(10));
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::done);
  schedule::capture_reset();

  // Ended from another thread mid-step (gpuscope_capture_stop).
  plan = {};  // no control stretch, no end: traced until ended
  ASSERT_TRUE(schedule::capture_begin(plan, why));
  EXPECT_TRUE(step(10));
  EXPECT_TRUE(step(10));
  EXPECT_TRUE(step(10));
  schedule::capture_end_now(t + 5 * kMs);
  EXPECT_FALSE(schedule::traced());
  EXPECT_EQ(schedule::capture_phase(), schedule::Phase::done);
  schedule::capture_reset();
  schedule::take_windows(false, t);

  // The slow-step rule: 3x the median of the dormant steps, at most once a
  // second; its capture (2 steps, no control stretch) begins at the boundary
  // that ends the slow step.
  g_attention_calls = 0;
  schedule::Rule rule{3.0, 0, 1000 * kMs, {}};
  rule.plan.steps = 2;
  rule.plan.start_step = 999999;  // ignored: the rule's capture begins where it fires
  schedule::set_rule(rule, t);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(step(10));
  EXPECT_EQ(schedule::take_rule_fired(), "");
  EXPECT_FALSE(step(25));  // 2.5x: not slow enough
  EXPECT_EQ(schedule::take_rule_fired(), "");
  const uint64_t slow_end = t + 50 * kMs;
  EXPECT_TRUE(step(50));  // ends the slow step: the next is traced
  const std::string fired = schedule::take_rule_fired();
  EXPECT_NE(fired.find("slow-step: step " + std::to_string(schedule::steps_ended() - 1) + " took 50.0 ms, 5.0x"),
            std::string::npos)
      << fired;
  EXPECT_EQ(g_attention_calls, 1);
  EXPECT_TRUE(enabled());
  EXPECT_EQ(schedule::capture_start_ns(), slow_end);
  EXPECT_TRUE(step(10));
  EXPECT_FALSE(step(10));  // 2 steps traced: done
  schedule::captured_steps(first, last);
  EXPECT_EQ(first, schedule::steps_ended() - 2);
  EXPECT_EQ(last, schedule::steps_ended() - 1);
  schedule::capture_reset();
  EXPECT_FALSE(step(60));  // slow again within the cooldown
  EXPECT_EQ(schedule::take_rule_fired(), "");
  for (int i = 0; i < 100; ++i) step(10);  // past the cooldown
  EXPECT_TRUE(step(60));
  EXPECT_NE(schedule::take_rule_fired().find("slow-step"), std::string::npos);
  schedule::capture_end_now(t);
  schedule::capture_reset();
  schedule::set_rule({}, t);  // disarmed
  for (int i = 0; i < 10; ++i) step(10);
  EXPECT_FALSE(step(200));
  EXPECT_EQ(schedule::take_rule_fired(), "");

  // --every: 0.5 s after it was armed, then 0.5 s after each.
  schedule::set_rule({0, 500 * kMs, 0, {}}, t);
  for (int i = 0; i < 45; ++i) step(10);
  EXPECT_EQ(schedule::take_rule_fired(), "");
  for (int i = 0; i < 10; ++i) step(10);
  EXPECT_NE(schedule::take_rule_fired().find("every"), std::string::npos);
  schedule::capture_end_now(t);
  schedule::capture_reset();
  schedule::set_rule({}, t);
}

}  // namespace
}  // namespace gpuscope::collector
