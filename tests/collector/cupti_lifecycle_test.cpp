// CUPTI's lifecycle (cupti_source.h, State) against the fake libcupti: it moves
// only along its table; a pause tears CUPTI down at the step boundary that
// made it (record's sampled stretches, an on-demand capture's end), or at a
// later one when it is not safe then or the drain failed, counted for
// collector_stat; a capture after a teardown subscribes afresh.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/cupti_source.h"
#include "collector/schedule.h"
#include "collector/writer_thread.h"
#include "tests/collector/cupti_fake_session.h"
#include "trace_formats/store/sqlite.h"

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
// subscribed; a drain that fails leaves it subscribed, not torn down, and the
// teardown waits for the next step boundary.
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
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  EXPECT_TRUE(cupti_source::live());
  EXPECT_EQ(cupti_source::teardown_attempts_failed(), 1u) << "counted, for the recording's collector_stat";
  EXPECT_EQ(cupti_source::teardown_failures(), 0u) << "tried again at the next step boundary";
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
  const State all[] = {State::kOff,      State::kDormant,  State::kSubscribed, State::kTracing,
                       State::kDraining, State::kTornDown, State::kDeferred,   State::kStopped};
  std::vector<std::string> allowed;
  for (State from : all)
    for (State to : all)
      if (cupti_source::transition_allowed(from, to))
        allowed.push_back(std::string(cupti_source::state_name(from)) + " > " + cupti_source::state_name(to));
  EXPECT_EQ(allowed, (std::vector<std::string>{
                         "off > dormant", "off > subscribed", "off > tracing", "dormant > subscribed",
                         "dormant > tracing", "subscribed > tracing", "subscribed > stopped",
                         "tracing > subscribed", "tracing > draining", "tracing > stopped",
                         "draining > subscribed", "draining > torn down", "draining > deferred",
                         "torn down > subscribed", "deferred > subscribed", "deferred > draining"}));
}


std::map<std::string, uint64_t> stats() {
  std::map<std::string, uint64_t> out;
  for (const cupti_source::Stat& s : cupti_source::lifecycle_stats()) out[s.key] = s.value;
  return out;
}

// Plays a call on another thread entering the driver (cbid 6: cuDevicePrimaryCtxRetain in the fake).
void api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  auto fn = reinterpret_cast<void (*)(CUpti_CallbackDomain, CUpti_CallbackId)>(dlsym(RTLD_DEFAULT, "fake_api_enter"));
  ASSERT_NE(fn, nullptr);
  fn(domain, cbid);
}

// record --steps 0-2 (the same holds for --sample and the control stretch):
// the boundary that ends the traced steps tears CUPTI down before it returns,
// through a CUDA call of its own (CUPTI's documented point, an API exit), with
// no API exit of the job needed.
TEST(CuptiLifecycle, TornDownAtTheStepBoundaryThatEndsTracing) {
  using cupti_source::State;
  Config c = start_fake(true, true);
  static int decoded = 0;
  cupti_source::set_before_teardown([] { return ++decoded > 0; });
  c.steps_window = true;
  c.steps_first = 0;
  c.steps_last = 1;
  const uint64_t t0 = 1000 * kMs;
  schedule::begin(c, t0);
  EXPECT_TRUE(schedule::on_step_boundary(c, t0 + 10 * kMs));  // step 1 traced
  EXPECT_EQ(cupti_source::state(), State::kTracing);
  EXPECT_FALSE(schedule::on_step_boundary(c, t0 + 20 * kMs));  // step 2 not: off, and torn down here
  EXPECT_EQ(cupti_source::state(), State::kTornDown);
  EXPECT_EQ(decoded, 1) << "what CUPTI held decoded before cuptiFinalize";
  const auto log = calls();
  const int poke = index_of(log, "cuCtxGetCurrent");
  ASSERT_GE(poke, 0) << "the boundary's own CUDA call";
  EXPECT_LT(poke, index_of(log, "cuCtxSynchronize", poke));
  EXPECT_LT(index_of(log, "cuCtxSynchronize", poke), index_of(log, "flush", poke));
  EXPECT_LT(index_of(log, "flush", poke), index_of(log, "unsubscribe", poke));
  EXPECT_LT(index_of(log, "unsubscribe", poke), index_of(log, "finalize", poke));
  // Nothing left enabled that costs a launch: every activity kind off
  // (device records last, before unsubscribing).
  EXPECT_GE(index_of(log, "disable " + std::to_string(CUPTI_ACTIVITY_KIND_DEVICE), poke), 0);
  EXPECT_EQ(count(log, "disable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 1);
  auto st = stats();
  EXPECT_EQ(st["cupti_finalizes"], 1u);
  EXPECT_EQ(st["tracing_pauses"], 1u);
  EXPECT_EQ(st["cupti_teardown_failures"], 0u);
  EXPECT_EQ(st["cupti_state"], static_cast<uint64_t>(State::kTornDown));
  EXPECT_FALSE(schedule::on_step_boundary(c, t0 + 30 * kMs));  // untraced steps cost nothing more
  EXPECT_EQ(count(calls(), "cuCtxGetCurrent"), 1);
  EXPECT_EQ(count(calls(), "finalize"), 1);
}

// A drain or decode that fails is tried again at the next step boundaries
// (kTeardownAttempts in all), each failure counted; in between no callback on
// every call is left on. Once given up, CUPTI stays subscribed until the next pause.
TEST(CuptiLifecycle, AFailedTeardownIsTriedAgainAtTheNextBoundariesThenGivenUp) {
  using cupti_source::State;
  start_fake(true, true);
  static bool decode_ok = false;
  cupti_source::set_before_teardown([] { return decode_ok; });
  ASSERT_TRUE(off());
  cupti_source::at_step_boundary();  // 1st attempt fails
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  EXPECT_EQ(count(calls(), "domain 1 on"), 1);
  EXPECT_EQ(count(calls(), "domain 1 off"), 1) << "no callback on every call while deferred";
  launch_exit();  // a job's call meanwhile changes nothing
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  cupti_source::at_step_boundary();  // 2nd fails
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  decode_ok = true;
  cupti_source::at_step_boundary();  // 3rd succeeds
  EXPECT_EQ(cupti_source::state(), State::kTornDown);
  auto st = stats();
  EXPECT_EQ(st["cupti_teardown_attempts_failed"], 2u);
  EXPECT_EQ(st["cupti_teardowns_deferred"], 2u);
  EXPECT_EQ(st["cupti_teardown_failures"], 0u) << "not given up";
  EXPECT_EQ(st["cupti_finalizes"], 1u);
  // The next stretch: three failures, then given up (subscribed, kinds off).
  ASSERT_TRUE(on());
  decode_ok = false;
  ASSERT_TRUE(off());
  for (int i = 0; i < cupti_source::kTeardownAttempts + 2; ++i) cupti_source::at_step_boundary();
  EXPECT_EQ(cupti_source::state(), State::kSubscribed);
  st = stats();
  EXPECT_EQ(st["cupti_teardown_attempts_failed"], 2u + cupti_source::kTeardownAttempts);
  EXPECT_EQ(st["cupti_teardown_failures"], 1u) << "given up once, as gpuscope info says";
  EXPECT_EQ(st["cupti_finalizes"], 1u);
  const auto log = calls();
  for (const std::string domain : {"domain 1", "domain 2"}) {  // the driver's and the runtime's
    int last_on = -1, last_off = -1;
    for (int i = 0; i < static_cast<int>(log.size()); ++i) {
      if (log[i] == domain + " on") last_on = i;
      if (log[i] == domain + " off") last_off = i;
    }
    EXPECT_GT(last_off, last_on) << domain << ": no callback left on every call";
  }
  EXPECT_EQ(cupti_source::illegal_transitions(), 0u);
}

// Not safe while a context is being created on another thread: the teardown
// waits for the next step boundary after that creation returned.
TEST(CuptiLifecycle, NoTeardownWhileAContextIsBeingCreated) {
  using cupti_source::State;
  start_fake(true, true);
  EXPECT_EQ(count(calls(), "callback 1 6 on"), 1) << "context creation watched from subscription on";
  api_enter(CUPTI_CB_DOMAIN_DRIVER_API, 6);  // cuDevicePrimaryCtxRetain under way elsewhere
  ASSERT_TRUE(off());
  cupti_source::at_step_boundary();
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 0);
  EXPECT_EQ(count(calls(), "finalize"), 0);
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 6, 0);  // it returns
  EXPECT_EQ(cupti_source::state(), State::kDeferred);
  cupti_source::at_step_boundary();
  EXPECT_EQ(cupti_source::state(), State::kTornDown);
  EXPECT_EQ(count(calls(), "finalize"), 1);
  auto st = stats();
  EXPECT_EQ(st["cupti_teardowns_deferred"], 1u);
  EXPECT_EQ(st["cupti_teardown_attempts_failed"], 0u) << "not a failure: not safe then";
}

// With nobody to decode (a capture's writer has stopped), the teardown still
// happens: what CUPTI handed over is dropped (counted), not left for a later
// writer to decode with names cuptiFinalize freed.
TEST(CuptiLifecycle, WithoutAWriterTheTeardownDropsWhatCuptiHandedOver) {
  using cupti_source::State;
  start_fake(true, true);
  cupti_source::set_before_teardown(nullptr);
  ASSERT_TRUE(off());
  cupti_source::at_step_boundary();
  EXPECT_EQ(cupti_source::state(), State::kTornDown);
  EXPECT_EQ(stats()["cupti_buffers_discarded"], 0u);  // the fake hands over no buffer
}

// An on-demand job: dormant, a capture (control 0, 2 traced steps) whose last
// boundary leaves CUPTI torn down before the capture's file is closed, then a
// second capture that subscribes CUPTI afresh and tears it down again; the
// writer's collector_stat says so in the capture's file.
TEST(CuptiLifecycle, EachCaptureEndsTornDownAndTheNextSubscribesAfresh) {
  using cupti_source::State;
  load_fakes(true);
  static Config c;
  c.on_demand = true;
  c.finalize_when_off = true;
  cupti_source::wait_dormant();
  schedule::set_cupti_starter([] {
    std::string why;
    if (!cupti_source::active()) {
      EXPECT_TRUE(cupti_source::start(c, false, why)) << why;
    }
  });
  uint64_t t = 1000 * kMs;
  schedule::begin(c, t);
  schedule::expect_steps(nullptr);  // steps drive the captures, not the writer's ticks
  const auto step = [&] { return schedule::on_step_boundary(c, t += 10 * kMs); };
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(step());
  EXPECT_EQ(cupti_source::state(), State::kDormant);
  const auto path = std::filesystem::temp_directory_path() / ("lifecycle_" + std::to_string(getpid()) + ".db");
  for (int capture = 1; capture <= 2; ++capture) {
    std::filesystem::remove(path);
    Config w = c;
    w.output = path.string();
    writer_thread::start(w, [] {});
    ASSERT_TRUE(writer_thread::wait_open(5000));
    cupti_source::set_before_teardown([] { return writer_thread::decode_cupti_now(2000); });
    schedule::CapturePlan plan;
    plan.steps = 2;
    std::string why;
    ASSERT_TRUE(schedule::capture_begin(plan, why)) << why;
    EXPECT_TRUE(step());  // begins: traced from here
    EXPECT_EQ(cupti_source::state(), State::kTracing);
    EXPECT_TRUE(step());
    EXPECT_FALSE(step());  // the capture's last boundary
    EXPECT_EQ(schedule::capture_phase(), schedule::Phase::done);
    EXPECT_EQ(cupti_source::state(), State::kTornDown) << "torn down before the file is closed";
    ASSERT_TRUE(writer_thread::stop(5000));
    cupti_source::set_before_teardown(nullptr);
    schedule::capture_reset();
    EXPECT_FALSE(step());
    store::Connection db(path.string(), store::Connection::Mode::kReadOnly);
    const auto stat = [&](const char* key) {
      return db.query_int(std::string("SELECT value FROM collector_stat WHERE key = '") + key + "'").value_or(-1);
    };
    EXPECT_EQ(stat("cupti_finalizes"), capture);
    EXPECT_EQ(stat("cupti_teardown_failures"), 0);
    EXPECT_EQ(stat("cupti_state"), static_cast<int64_t>(State::kTornDown));
  }
  EXPECT_EQ(count(calls(), "subscribe"), 2) << "subscribed afresh for the second capture";
  EXPECT_EQ(count(calls(), "finalize"), 2);
  EXPECT_EQ(count(calls(), "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 2);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace gpuscope::collector
