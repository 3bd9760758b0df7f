// CUPTI's lifecycle (cupti_source.h, State) against the fake libcupti: it moves
// only along its table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/cupti_source.h"
#include "tests/collector/cupti_fake_session.h"

namespace gpuscope::collector {
namespace {

// The lifecycle moves only along cupti_source.h's table: through a teardown and
// two resumes (one before the teardown came), then the stop at exit, after
// which nothing switches tracing on again.
TEST(CuptiLifecycle, MovesAlongItsTable) {
  using cupti_source::State;
  start_fake(true, true);
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  ASSERT_TRUE(off(false));
  EXPECT_EQ(cupti_source::state(), State::kDraining);
  launch_exit();
  EXPECT_EQ(cupti_source::state(), State::kTornDown);
  ASSERT_TRUE(on());
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  ASSERT_TRUE(off());
  EXPECT_EQ(cupti_source::state(), State::kDraining);
  ASSERT_TRUE(on());  // before any API exit: disarmed, then traced again
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  cupti_source::stop();
  EXPECT_EQ(cupti_source::state(), State::kStopped);
  EXPECT_TRUE(cupti_source::live()) << "the final flush still reaches CUPTI";
  const int enables = count(calls(), "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  EXPECT_TRUE(on());
  EXPECT_TRUE(off());
  EXPECT_EQ(cupti_source::state(), State::kStopped);
  EXPECT_EQ(count(calls(), "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), enables);
  EXPECT_EQ(cupti_source::illegal_transitions(), 0u);
}

// A recording that starts untraced (sampled, windowed, on demand) starts
// subscribed; a drain that fails leaves it subscribed, not torn down.
TEST(CuptiLifecycle, AnUntracedStartIsSubscribed) {
  using cupti_source::State;
  load_fakes(true);
  EXPECT_EQ(cupti_source::state(), State::kOff);
  EXPECT_FALSE(cupti_source::active());
  Config config;
  config.finalize_when_off = true;
  std::string why;
  ASSERT_TRUE(cupti_source::start(config, false, why)) << why;
  EXPECT_EQ(cupti_source::state(), State::kSubscribed);
  ASSERT_TRUE(on());
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  cupti_source::set_before_teardown([] { return false; });  // the records could not be decoded
  ASSERT_TRUE(off());
  EXPECT_EQ(cupti_source::teardown_failures(), 0u);
  launch_exit();
  EXPECT_EQ(cupti_source::state(), State::kSubscribed);
  EXPECT_EQ(cupti_source::teardown_failures(), 1u) << "counted, for the recording's collector_stat";
  EXPECT_EQ(cupti_source::finalizes(), 0u);
  EXPECT_EQ(cupti_source::illegal_transitions(), 0u);
}

// record --on-demand: dormant, CUPTI not loaded, until the first capture
// starts it; nothing switches tracing on before that.
TEST(CuptiLifecycle, AnOnDemandJobIsDormantUntilItsFirstCapture) {
  using cupti_source::State;
  load_fakes(true);
  cupti_source::wait_dormant();
  EXPECT_EQ(cupti_source::state(), State::kDormant);
  EXPECT_FALSE(cupti_source::active());
  EXPECT_FALSE(cupti_source::live());
  EXPECT_TRUE(on()) << "a switch before the first capture does nothing";
  EXPECT_EQ(cupti_source::state(), State::kDormant);
  EXPECT_TRUE(calls().empty()) << "CUPTI not called while dormant";
  Config config;
  config.finalize_when_off = true;
  std::string why;
  ASSERT_TRUE(cupti_source::start(config, false, why)) << why;
  EXPECT_EQ(cupti_source::state(), State::kSubscribed);
  cupti_source::wait_dormant();
  EXPECT_EQ(cupti_source::state(), State::kSubscribed) << "dormant only from off";
  ASSERT_TRUE(on());
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_EQ(cupti_source::state(), State::kTornDown) << "between captures: torn down, not dormant";
  EXPECT_EQ(cupti_source::finalizes(), 1u);
  EXPECT_EQ(cupti_source::teardown_failures(), 0u);
  EXPECT_EQ(cupti_source::illegal_transitions(), 0u);
}

TEST(CuptiLifecycle, TheTableAllowsOnlyTheDocumentedMoves) {
  using cupti_source::State;
  const State all[] = {State::kOff, State::kDormant, State::kSubscribed, State::kTracing, State::kDraining, State::kTornDown,
                       State::kStopped};
  std::vector<std::string> allowed;
  for (State from : all)
    for (State to : all)
      if (cupti_source::transition_allowed(from, to))
        allowed.push_back(std::string(cupti_source::state_name(from)) + " > " + cupti_source::state_name(to));
  EXPECT_EQ(allowed, (std::vector<std::string>{
                         "off > dormant", "off > subscribed", "off > tracing", "dormant > subscribed",
                         "dormant > tracing", "subscribed > tracing", "subscribed > stopped",
                         "tracing > subscribed", "tracing > draining", "tracing > stopped",
                         "draining > subscribed", "draining > torn down", "torn down > subscribed"}));
}

}  // namespace
}  // namespace gpuscope::collector
