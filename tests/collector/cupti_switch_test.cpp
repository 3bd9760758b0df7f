// Tracing switched off and on while the job runs (cupti_source::set_tracing),
// against a fake libcupti and libcuda that log the calls made to them.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/cupti_source.h"
#include "collector/writer_thread.h"

namespace gpuscope::collector {
// collector.cpp (the entry points, not linked here) says what CUPTI is doing.
std::string cupti_status() { return "test"; }

namespace {

// Each test runs in its own process (gtest_discover_tests): cupti_source is process-wide.
std::vector<std::string> calls() {
  auto fn = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "fake_calls"));
  std::vector<std::string> out;
  if (!fn) return out;
  std::istringstream in(fn());
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

int count(const std::vector<std::string>& log, const std::string& what) {
  int n = 0;
  for (const std::string& s : log) n += s == what;
  return n;
}

int index_of(const std::vector<std::string>& log, const std::string& what, int from = 0) {
  for (int i = from; i < static_cast<int>(log.size()); ++i)
    if (log[i] == what) return i;
  return -1;
}

Config start_fake(bool finalize, bool with_cuda) {
  setenv("GPUSCOPE_CUPTI", FAKE_CUPTI_PATH, 1);
  // Global, so the test (and the fake libcuda) can reach its log; load_cupti gets this handle.
  EXPECT_NE(dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  if (with_cuda) {
    EXPECT_NE(dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  }
  Config config;
  config.finalize_when_off = finalize;
  std::string why;
  EXPECT_TRUE(cupti_source::start(config, true, why)) << why;
  EXPECT_NE(dlsym(RTLD_DEFAULT, "fake_calls"), nullptr) << "the fake libcupti was not the one loaded";
  return config;
}

// Plays CUPTI calling the collector at the exit of an API call returning rc
// (the fake libcupti's fake_api_exit; a test with no such fake fails here).
void api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int rc) {
  auto fn = reinterpret_cast<void (*)(CUpti_CallbackDomain, CUpti_CallbackId, int)>(
      dlsym(RTLD_DEFAULT, "fake_api_exit"));
  ASSERT_NE(fn, nullptr);
  fn(domain, cbid, rc);
}

const std::string kRuntimeOn = "enable " + std::to_string(CUPTI_ACTIVITY_KIND_RUNTIME);

TEST(CuptiSwitch, EveryResumeSwitchesTheNoisyCallsOffAgain) {
  start_fake(false, false);
  std::string why;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  ASSERT_TRUE(cupti_source::set_tracing(false, false, why));
  ASSERT_TRUE(cupti_source::set_tracing(true, false, why));
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
  EXPECT_EQ(cupti_source::pauses(), 2u);
}

TEST(CuptiSwitch, FinalizeOnlyAtAStepBoundaryAfterDrainingTheDevices) {
  start_fake(true, true);
  std::string why;
  // From the writer thread (a switch by time): never torn down.
  ASSERT_TRUE(cupti_source::set_tracing(false, false, why));
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_TRUE(cupti_source::live());
  ASSERT_TRUE(cupti_source::set_tracing(true, false, why));
  // At a step boundary: drained, flushed, unsubscribed, finalized.
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  auto log = calls();
  const int sync = index_of(log, "cuCtxSynchronize");
  const int fin = index_of(log, "finalize");
  ASSERT_GE(sync, 0);
  ASSERT_GE(fin, 0);
  EXPECT_LT(sync, index_of(log, "flush", sync));
  EXPECT_LT(index_of(log, "unsubscribe", sync), fin);
  EXPECT_FALSE(cupti_source::live());
  EXPECT_EQ(cupti_source::finalizes(), 1u);
  // Resuming subscribes again and filters again.
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why)) << why;
  log = calls();
  EXPECT_EQ(count(log, "subscribe"), 2);
  EXPECT_GE(index_of(log, "runtime 1 off", fin), 0);
  EXPECT_TRUE(cupti_source::live());
}

TEST(CuptiSwitch, NoFinalizeInsideAStreamCapture) {
  start_fake(true, true);
  // Capture begin and end, runtime and driver (fake cbids 3 and 4), are watched.
  const auto log = calls();
  EXPECT_EQ(count(log, "callback 1 3 on"), 1);
  EXPECT_EQ(count(log, "callback 1 4 on"), 1);
  EXPECT_EQ(count(log, "callback 2 3 on"), 1);
  EXPECT_EQ(count(log, "callback 2 4 on"), 1);
  std::string why;
  // A step ends inside torch.cuda.graph: no drain (it would invalidate the capture), no teardown.
  api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 3, 0);
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 0);
  EXPECT_EQ(count(calls(), "finalize"), 0);
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  // The capture ends: its graph will be replayed, so CUPTI stays (see the next test).
  api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 4, 0);
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_TRUE(cupti_source::kept_for_graphs());
}

TEST(CuptiSwitch, AFailedCaptureDoesNotCount) {
  start_fake(true, true);
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 3, 1);  // cuStreamBeginCapture returned an error
  std::string why;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(count(calls(), "finalize"), 1);
  // Watched again after the fresh subscription.
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  EXPECT_EQ(count(calls(), "callback 1 3 on"), 2);
  EXPECT_EQ(count(calls(), "callback 2 4 on"), 2);
}

// After a teardown the first replay of a graph waited for all queued work, so a
// job that replays graphs keeps CUPTI initialized from its first launch on.
TEST(CuptiSwitch, NoFinalizeOnceAGraphWasLaunched) {
  start_fake(true, true);
  EXPECT_EQ(count(calls(), "callback 1 5 on"), 1);  // cudaGraphLaunch watched
  EXPECT_EQ(count(calls(), "callback 2 5 on"), 1);  // cuGraphLaunch
  std::string why;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_FALSE(cupti_source::kept_for_graphs());
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  EXPECT_EQ(count(calls(), "callback 1 5 on"), 2);  // watched again after resubscribing
  api_exit(CUPTI_CB_DOMAIN_DRIVER_API, 5, 0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
    ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  }
  EXPECT_EQ(count(calls(), "finalize"), 1);
  EXPECT_EQ(count(calls(), "cuCtxSynchronize"), 1);
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
  std::string why;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_TRUE(cupti_source::live());
  ASSERT_TRUE(cupti_source::set_tracing(true, true, why));
  decoded = true;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  const auto log = calls();
  EXPECT_EQ(count(log, "finalize"), 1);
  EXPECT_LT(index_of(log, "flush"), index_of(log, "finalize"));  // decoded after the forced flush
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
  setenv("GPUSCOPE_CUPTI", FAKE_CUPTI_PATH, 1);
  ASSERT_NE(dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  Config config;
  std::string why;
  ASSERT_TRUE(cupti_source::start(config, false, why)) << why;
  const auto log = calls();
  EXPECT_EQ(count(log, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_DEVICE)), 1);
  EXPECT_EQ(count(log, "enable " + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)), 0);
}

TEST(CuptiSwitch, NoFinalizeWhenTheDevicesCannotBeDrained) {
  start_fake(true, false);  // no libcuda in the process
  std::string why;
  ASSERT_TRUE(cupti_source::set_tracing(false, true, why));
  EXPECT_EQ(count(calls(), "finalize"), 0);
  EXPECT_TRUE(cupti_source::live());
  EXPECT_EQ(cupti_source::pauses(), 1u);
}

}  // namespace
}  // namespace gpuscope::collector
