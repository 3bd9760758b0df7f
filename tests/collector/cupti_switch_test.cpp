// Tracing switched off and on while the job runs (cupti_source::set_tracing),
// against a fake libcupti and libcuda that log the calls made to them.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "collector/config.h"
#include "collector/cupti_source.h"
#include "collector/schedule.h"
#include "collector/writer_thread.h"
#include "tests/collector/cupti_fake_session.h"

namespace gpuscope::collector {
namespace {

TEST(CuptiSwitch, EveryResumeSwitchesTheNoisyCallsOffAgain) {
  start_fake(false, false);
  ASSERT_TRUE(off());
  ASSERT_TRUE(on());
  ASSERT_TRUE(off(false));
  ASSERT_TRUE(on(false));
  const auto log = calls();
  // cbid 1 is cudaGetDevice / cuCtxGetCurrent (noisy), 2 cudaLaunchKernel / cuLaunchKernel.
  EXPECT_EQ(count(log, kRuntimeOn), 3);
  EXPECT_EQ(count(log, "runtime 1 off"), 3);
  EXPECT_EQ(count(log, "driver 1 off"), 3);
  EXPECT_EQ(count(log, "runtime 2 off"), 0);
  EXPECT_EQ(count(log, "driver 2 off"), 0);
  // Each filter comes after the enable it belongs to.
  EXPECT_LT(index_of(log, kRuntimeOn, index_of(log, "flush")), index_of(log, "runtime 1 off", index_of(log, "flush")));
  EXPECT_EQ(count(log, "finalize"), 0);  // not asked for
  EXPECT_EQ(count(log, "domain 1 on"), 0);
  EXPECT_EQ(cupti_source::pauses(), 2u);
}

// CUPTI's documented point for cuptiFinalize is the exit of a CUDA API call:
// a pause arms the teardown, the next exit on any thread carries it out.
TEST(CuptiSwitch, FinalizeAtTheNextApiExitAfterDrainingTheDevices) {
  start_fake(true, true);
  ASSERT_TRUE(off(false));  // from the writer thread (a switch by time) too
  auto log = calls();
  EXPECT_EQ(count(log, "domain 1 on"), 1);  // every runtime and driver API exit
  EXPECT_EQ(count(log, "domain 2 on"), 1);
  EXPECT_EQ(count(log, "finalize"), 0);
  EXPECT_EQ(count(log, "cuCtxSynchronize"), 0);
  EXPECT_TRUE(cupti_source::teardown_pending());
  EXPECT_TRUE(cupti_source::live());
  launch_exit();
  log = calls();
  const int sync = index_of(log, "cuCtxSynchronize");
  const int fin = index_of(log, "finalize");
  ASSERT_GE(sync, 0);
  ASSERT_GE(fin, 0);
  EXPECT_LT(sync, index_of(log, "flush", sync));
  EXPECT_LT(index_of(log, "flush", sync), index_of(log, "unsubscribe", sync));
  EXPECT_LT(index_of(log, "unsubscribe", sync), fin);
  EXPECT_FALSE(cupti_source::live());
  EXPECT_FALSE(cupti_source::teardown_pending());
  EXPECT_EQ(cupti_source::finalizes(), 1u);
  launch_exit();  // nothing more to do
  EXPECT_EQ(count(calls(), "finalize"), 1);
  // Resuming drains the devices again, before subscribing: the stretch between
  // the two drains is the untraced steps' GPU time, taken once.
  uint64_t a = 0, b = 0;
  EXPECT_FALSE(cupti_source::take_untraced_span(a, b));
  ASSERT_TRUE(on());
  log = calls();
  EXPECT_EQ(count(log, "cuCtxSynchronize"), 2);
  EXPECT_LT(index_of(log, "cuCtxSynchronize", fin), index_of(log, "subscribe", fin));
  ASSERT_TRUE(cupti_source::take_untraced_span(a, b));
  EXPECT_GT(a, 0u);
  EXPECT_GE(b, a);
  EXPECT_FALSE(cupti_source::take_untraced_span(a, b));
  // Resuming subscribes again and filters again.
  EXPECT_EQ(count(log, "subscribe"), 2);
  EXPECT_GE(index_of(log, "runtime 1 off", fin), 0);
  EXPECT_TRUE(cupti_source::live());
}

// A step that begins with CPU work (a batch built in the main process) makes its
// first CUDA call late: the untraced stretch still counts from the pause at the
// step boundary, less the teardown's own time. Paused from the writer thread
// (not at a step boundary), it counts from the end of the teardown.
TEST(CuptiSwitch, UntracedStretchCountsFromThePauseLessTheTeardown) {
  using std::chrono::milliseconds;
  start_fake_with_decode(30);  // a slow decode before cuptiFinalize
  for (bool at_step_boundary : {true, false}) {
    const uint64_t t0 = now_ns();
    ASSERT_TRUE(off(at_step_boundary));
    std::this_thread::sleep_for(milliseconds(20));  // the step's CPU work before its first CUDA call
    launch_exit();                                  // the teardown: 30 ms or more
    std::this_thread::sleep_for(milliseconds(10));  // the untraced steps' CUDA work
    ASSERT_TRUE(on());
    const uint64_t t1 = now_ns();
    uint64_t a = 0, b = 0;
    ASSERT_TRUE(cupti_source::take_untraced_span(a, b));
    if (at_step_boundary) {
      EXPECT_GE(b - a, 30 * kMs);           // the 20 ms before the first call and the 10 ms after it
      EXPECT_LE(b - a, t1 - t0 - 30 * kMs);  // not the teardown
    } else {
      EXPECT_GE(b - a, 10 * kMs);
      EXPECT_LT(b - a, t1 - t0 - 50 * kMs);  // neither the teardown nor the CPU work before it
    }
  }
}

// On demand, CUPTI is torn down when a capture ends and the job runs dormant
// until the next capture's control stretch: the untraced stretch that capture
// measures starts at the drain where its control stretch begins, not at the
// previous capture's teardown.
TEST(CuptiSwitch, OnDemandTheUntracedStretchRestartsAtTheControlStretch) {
  using std::chrono::milliseconds;
  start_fake(true, true);
  cupti_source::restart_untraced_span();  // tracing: nothing to restart
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 0);
  ASSERT_TRUE(off(true));  // the capture ends
  launch_exit();           // torn down
  ASSERT_EQ(count(calls(), "cuCtxSynchronize"), 1);
  std::this_thread::sleep_for(milliseconds(60));  // dormant
  const uint64_t control = now_ns();
  cupti_source::restart_untraced_span();  // the next capture's control stretch begins: a drain
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 2);
  std::this_thread::sleep_for(milliseconds(10));  // the control steps
  ASSERT_TRUE(on());
  uint64_t a = 0, b = 0;
  ASSERT_TRUE(cupti_source::take_untraced_span(a, b));
  EXPECT_GE(a, control);  // not the 60 ms dormant
  EXPECT_GE(b - a, 10 * kMs);
  EXPECT_LT(b - a, 50 * kMs);
}

// What the switches cost the job beyond the drains (the GPU has nothing to
// run then) is recorded as gpuscope's own overhead on the switching thread:
// the teardown's flush, decode and cuptiFinalize, the resume's subscription
// and enabling. Without a teardown (CUPTI kept), a resume only enables.
TEST(CuptiSwitch, TeardownAndResumeAreRecordedAsOwnOverhead) {
  start_fake_with_decode(20);
  EXPECT_TRUE(cupti_source::take_own_overhead().empty());
  ASSERT_TRUE(off());
  const uint64_t before_teardown = now_ns();
  launch_exit();
  ASSERT_TRUE(on());
  const uint64_t after_resume = now_ns();
  const auto own = cupti_source::take_own_overhead();
  ASSERT_EQ(own.size(), 3u);
  const auto tid = static_cast<int64_t>(gettid());
  EXPECT_STREQ(own[0].name, cupti_source::kTeardownName);
  EXPECT_GE(own[0].start, before_teardown);
  EXPECT_GE(own[0].end - own[0].start, 20 * kMs);
  EXPECT_STREQ(own[1].name, cupti_source::kSubscribeName);
  EXPECT_GE(own[1].start, own[0].end);
  EXPECT_STREQ(own[2].name, cupti_source::kEnableName);
  EXPECT_EQ(own[2].start, own[1].end);
  EXPECT_LE(own[2].end, after_resume);
  for (const auto& o : own) EXPECT_EQ(o.tid, tid) << o.name;
  EXPECT_TRUE(cupti_source::take_own_overhead().empty());  // taken once
  // Paused and resumed before any API exit: no teardown, the resume only enables again.
  ASSERT_TRUE(off());
  ASSERT_TRUE(on());
  const auto kept = cupti_source::take_own_overhead();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_STREQ(kept[0].name, cupti_source::kEnableName);
}

// GPUSCOPE_CUPTI_ATTRIBUTES reaches CUPTI before the buffer callbacks are
// registered, flags as one byte and sizes as size_t.
TEST(CuptiSwitch, UserAttributesAreSetAtSubscription) {
  load_fakes(false);
  setenv("GPUSCOPE_CUPTI_ATTRIBUTES", "0=33554432,bad,9=0", 1);
  Config config = load_config();
  unsetenv("GPUSCOPE_CUPTI_ATTRIBUTES");
  ASSERT_EQ(config.cupti_attributes.size(), 2u);  // "bad" is left out
  std::string why;
  ASSERT_TRUE(cupti_source::start(config, true, why)) << why;
  auto log = calls();
  const int subscribed = index_of(log, "subscribe");
  EXPECT_GT(index_of(log, "attribute 0 = 33554432 (8 bytes)", subscribed), subscribed);
  EXPECT_GT(index_of(log, "attribute 9 = 0 (1 bytes)", subscribed), subscribed);
}

TEST(CuptiSwitch, ResumingBeforeAnyApiExitDisarmsTheTeardown) {
  start_fake(true, true);
  ASSERT_TRUE(off());
  ASSERT_TRUE(on());
  EXPECT_FALSE(cupti_source::teardown_pending());
  auto log = calls();
  EXPECT_EQ(count(log, "domain 1 off"), 1);
  EXPECT_EQ(count(log, "domain 2 off"), 1);
  // Disabling the domains dropped the capture callbacks too: watched again.
  EXPECT_GT(index_of(log, "callback 1 3 on", index_of(log, "domain 2 off")), 0);
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_EQ(count(calls(), "subscribe"), 1);
}

TEST(CuptiSwitch, NoFinalizeInsideAStreamCapture) {
  start_fake(true, true);
  // Capture begin and end, runtime and driver (fake cbids 3 and 4), are watched.
  const auto log = calls();
  EXPECT_EQ(count(log, "callback 1 3 on"), 1);
  EXPECT_EQ(count(log, "callback 1 4 on"), 1);
  EXPECT_EQ(count(log, "callback 2 3 on"), 1);
  EXPECT_EQ(count(log, "callback 2 4 on"), 1);
  // Paused, then a capture begins (torch.cuda.graph) before any other call
  // returns: no drain (it would invalidate the capture), no teardown, and since
  // its graph will be replayed, none later either (see the next test).
  ASSERT_TRUE(off());
  api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 3, 0);
  launch_exit();
  api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 4, 0);
  launch_exit();
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 0);
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_FALSE(cupti_source::teardown_pending());
  ASSERT_TRUE(on());
  ASSERT_TRUE(off());
  EXPECT_FALSE(cupti_source::teardown_pending());
  EXPECT_TRUE(cupti_source::kept_for_graphs());
}

TEST(CuptiSwitch, AFailedCaptureDoesNotCount) {
  start_fake(true, true);
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 3, 1);  // cuStreamBeginCapture returned an error
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 1);
  // Watched again after the fresh subscription.
  ASSERT_TRUE(on());
  EXPECT_EQ(count(calls(), "callback 1 3 on"), 2);
  EXPECT_EQ(count(calls(), "callback 2 4 on"), 2);
}

// Callbacks on every call cost the job: none may stay on when arming fails halfway.
TEST(CuptiSwitch, AFailedArmLeavesNoCallbackOnEveryCall) {
  start_fake(true, true);
  auto fails = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "fake_driver_domain_fails"));
  ASSERT_NE(fails, nullptr);
  fails();
  ASSERT_TRUE(off());
  EXPECT_FALSE(cupti_source::teardown_pending());
  const auto log = calls();
  EXPECT_EQ(count(log, "domain 1 on"), 1);
  EXPECT_GT(index_of(log, "domain 1 off", index_of(log, "domain 1 on")), 0);
  EXPECT_GE(index_of(log, "flush", index_of(log, "domain 1 off")), 0);  // handed over at once instead
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 0);
}

// Repeated correlation ids found by the writer after the pause: no teardown.
TEST(CuptiSwitch, AForbiddenTeardownIsDroppedAtTheExit) {
  start_fake(true, true);
  ASSERT_TRUE(off());
  EXPECT_TRUE(cupti_source::teardown_pending());
  cupti_source::forbid_teardown();
  launch_exit();
  EXPECT_FALSE(cupti_source::teardown_pending());
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 0);
}

// A capture that began while CUPTI was torn down is first seen at its end.
TEST(CuptiSwitch, ACaptureEndSeenAloneKeepsCupti) {
  start_fake(true, true);
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 4, 0);  // cuStreamEndCapture, its begin unseen
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_FALSE(cupti_source::teardown_pending());
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_EQ(count(calls(), "domain 1 on"), 0);
  EXPECT_TRUE(cupti_source::kept_for_graphs());
}

// After a teardown the first replay of a graph waited for all queued work, so a
// job that replays graphs keeps CUPTI initialized from its first launch on.
TEST(CuptiSwitch, NoFinalizeOnceAGraphWasLaunched) {
  start_fake(true, true);
  EXPECT_EQ(count(calls(), "callback 1 5 on"), 1);  // cudaGraphLaunch watched
  EXPECT_EQ(count(calls(), "callback 2 5 on"), 1);  // cuGraphLaunch
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_FALSE(cupti_source::kept_for_graphs());
  ASSERT_TRUE(on());
  EXPECT_EQ(count(calls(), "callback 1 5 on"), 2);  // watched again after resubscribing
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 5, 0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(off());
    launch_exit();
    ASSERT_TRUE(on());
  }
  EXPECT_EQ(count(calls(), "finalize"), 1);
  // The teardown's drain, and the resume's after it (the untraced stretch measured).
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 2);
  EXPECT_TRUE(cupti_source::kept_for_graphs());
  EXPECT_TRUE(cupti_source::live());
}

// cuptiFinalize frees the names that handed-over records point at: the writer
// must have decoded them first, or CUPTI stays.
TEST(CuptiSwitch, NoFinalizeUntilTheRecordsAreDecoded) {
  start_fake(true, true);
  static bool decoded = false;
  static int asked = 0;
  cupti_source::set_before_teardown([] {
    ++asked;
    return decoded;
  });
  ASSERT_TRUE(off());
  EXPECT_EQ(asked, 0);  // not before the API exit
  launch_exit();
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_FALSE(cupti_source::teardown_pending());  // given up until the next pause
  EXPECT_TRUE(cupti_source::live());
  ASSERT_TRUE(on());
  decoded = true;
  ASSERT_TRUE(off());
  launch_exit();
  const auto log = calls();
  EXPECT_EQ(count(log, "finalize"), 1);
  EXPECT_LT(index_of(log, "flush"), index_of(log, "finalize"));  // decoded after the forced flush
}

// A teardown under way waits for the writer to decode while holding the switch
// lock: the writer's own switches must not wait for it, or both would stall.
TEST(CuptiSwitch, TheWriterNeverWaitsForATeardownUnderWay) {
  start_fake(true, true);
  static cupti_source::Switched writer_got = cupti_source::Switched::yes;
  cupti_source::set_before_teardown([] {
    std::thread writer([] {
      std::string why;
      writer_got = cupti_source::set_tracing(true, false, why);
    });
    writer.join();
    return true;
  });
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_EQ(writer_got, cupti_source::Switched::busy);
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_TRUE(on(false));  // once done, the writer's switch goes through
  EXPECT_TRUE(cupti_source::live());
}

// The schedule on top: the writer's switch by time, coming while a teardown
// waits for the writer, is left to a later tick instead of half done.
TEST(CuptiSwitch, TheSchedulesSwitchByTimeWaitsForTheNextTickDuringATeardown) {
  Config config = start_fake(true, true);
  config.sample_on_ms = 100;
  config.sample_off_ms = 300;
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(config, t0);
  static std::vector<int> plugin_told;
  schedule::expect_steps([](int on) { plugin_told.push_back(on); });
  static Config cfg;
  cfg = config;
  static bool traced_during = true;
  cupti_source::set_before_teardown([] {
    // 700 ms without a step, in the on-time: the writer wants tracing back.
    std::thread writer([] { schedule::on_tick(cfg, 1000 * 1000000ull + 820 * 1000000ull); });
    writer.join();
    traced_during = schedule::traced();
    return true;
  });
  // Off, and torn down at that boundary (cupti_source::at_step_boundary).
  EXPECT_FALSE(schedule::on_step_boundary(config, t0 + 120 * kMs));
  EXPECT_FALSE(traced_during);
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_EQ(plugin_told, (std::vector<int>{1, 0}));
  schedule::on_tick(config, t0 + 830 * kMs);  // the next tick switches
  EXPECT_TRUE(schedule::traced());
  EXPECT_TRUE(cupti_source::live());
  EXPECT_EQ(count(calls(), "subscribe"), 2);
  EXPECT_EQ(plugin_told, (std::vector<int>{1, 0, 1}));
}

// The hook the collector installs: the writer thread decodes on request, and
// says no once it has stopped.
TEST(CuptiSwitch, TheWriterDecodesOnRequest) {
  const auto path = std::filesystem::temp_directory_path() / ("decode_now_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  Config config;
  config.output = path.string();
  writer_thread::start(config, [] {});
  EXPECT_TRUE(writer_thread::decode_cupti_now(5000));
  EXPECT_TRUE(writer_thread::decode_cupti_now(5000));
  EXPECT_TRUE(writer_thread::stop(5000));
  EXPECT_FALSE(writer_thread::decode_cupti_now(100));
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + "-wal");
  std::filesystem::remove(path.string() + "-shm");
}

// CUDA can start while untraced (--delay, --sample): device records must still come.
TEST(CuptiSwitch, DeviceRecordsAreOnWhileUntraced) {
  load_fakes(false);
  Config config;
  std::string why;
  ASSERT_TRUE(cupti_source::start(config, false, why)) << why;
  const auto log = calls();
  EXPECT_EQ(count(log, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_DEVICE)), 1);
  EXPECT_EQ(count(log, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 0);
}

// `--trace ...,overhead` (GPUSCOPE_TRACE) adds CUPTI's overhead records to the
// kinds enabled; the default leaves them off.
TEST(CuptiSwitch, OverheadRecordsOnlyWhenAsked) {
  setenv("GPUSCOPE_TRACE", "cuda,nvtx,torch,overhead", 1);
  Config asked = load_config();
  unsetenv("GPUSCOPE_TRACE");
  EXPECT_TRUE(asked.overhead);
  EXPECT_FALSE(load_config().overhead);
  load_fakes(false);
  std::string why;
  ASSERT_TRUE(cupti_source::start(asked, true, why)) << why;
  const std::string overhead_on = "enable " + std::to_string(CUPTI_ACTIVITY_KIND_OVERHEAD);
  EXPECT_EQ(count(calls(), overhead_on), 1);
  ASSERT_TRUE(off());
  ASSERT_TRUE(on());
  EXPECT_EQ(count(calls(), overhead_on), 2);  // on again with the other kinds at each resume
}

TEST(CuptiSwitch, NoFinalizeWhenTheDevicesCannotBeDrained) {
  start_fake(true, false);  // no libcuda in the process
  ASSERT_TRUE(off());
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_FALSE(cupti_source::teardown_pending());
  EXPECT_TRUE(cupti_source::live());
  EXPECT_EQ(cupti_source::pauses(), 1u);
}

// A nearly full disk stops the recording for good (writer_thread.cpp): the
// activity kinds go off, and a later resume (a step boundary of the control
// stretch or a duty cycle) does not switch them on again.
TEST(CuptiSwitch, StoppedForGoodNeverResumes) {
  start_fake(false, false);
  ASSERT_TRUE(cupti_source::stop_for_good());
  const auto stopped = calls();
  EXPECT_EQ(count(stopped, "disable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 1);
  EXPECT_EQ(count(stopped, "disable " + std::to_string(CUPTI_ACTIVITY_KIND_DEVICE)), 0);
  EXPECT_TRUE(on());
  EXPECT_TRUE(on(false));
  const auto later = calls();
  EXPECT_EQ(count(later, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)),
            count(stopped, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
      << "tracing resumed after the stop";
  EXPECT_TRUE(cupti_source::stop_for_good()) << "a second stop does nothing and says done";
}

// A stop for good (the disk filled) also removes CUPTI's per-launch cost: the
// teardown runs at the next API exit though the writer, ended, decodes nothing.
TEST(CuptiSwitch, StoppedForGoodTearsCuptiDown) {
  start_fake(true, true);
  cupti_source::set_before_teardown([] { return false; });  // the writer has ended
  ASSERT_TRUE(cupti_source::stop_for_good());
  EXPECT_TRUE(cupti_source::teardown_pending());
  launch_exit();
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_FALSE(cupti_source::live());
  EXPECT_TRUE(on());
  EXPECT_EQ(count(calls(), "subscribe"), 1) << "subscribed again after the stop";
}


}  // namespace
}  // namespace gpuscope::collector
