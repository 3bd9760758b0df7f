// The fake CUPTI session the switching and lifecycle tests drive: a fake
// libcupti and libcuda that log the calls made to them, and the job's moves
// (tracing off and on, an API exit). Each test runs in its own process
// (gtest_discover_tests): cupti_source is process-wide.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collector/config.h"
#include "collector/cupti_source.h"

namespace gpuscope::collector {

inline std::vector<std::string> calls() {
  auto fn = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "fake_calls"));
  std::vector<std::string> out;
  if (!fn) return out;
  std::istringstream in(fn());
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

inline int count(const std::vector<std::string>& log, const std::string& what) {
  int n = 0;
  for (const std::string& s : log) n += s == what;
  return n;
}

inline int index_of(const std::vector<std::string>& log, const std::string& what, int from = 0) {
  for (int i = from; i < static_cast<int>(log.size()); ++i)
    if (log[i] == what) return i;
  return -1;
}

// Loads the fake libcupti (and the fake libcuda) where the collector will
// find them, before cupti_source::start. Global, so the test (and the fake
// libcuda) can reach its log; load_cupti gets this handle.
inline void load_fakes(bool with_cuda) {
  setenv("GPUSCOPE_CUPTI", FAKE_CUPTI_PATH, 1);
  EXPECT_NE(dlopen(FAKE_CUPTI_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  if (with_cuda) {
    EXPECT_NE(dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  }
}

inline Config start_fake(bool finalize, bool with_cuda) {
  load_fakes(with_cuda);
  Config config;
  config.finalize_when_off = finalize;
  std::string why;
  EXPECT_TRUE(cupti_source::start(config, true, why)) << why;
  EXPECT_NE(dlsym(RTLD_DEFAULT, "fake_calls"), nullptr) << "the fake libcupti was not the one loaded";
  return config;
}

inline constexpr uint64_t kMs = 1000000;

// The fake with teardowns, where the writer's decode before cuptiFinalize takes `ms`.
inline int g_decode_ms = 0;
inline void start_fake_with_decode(int ms) {
  start_fake(true, true);
  g_decode_ms = ms;
  cupti_source::set_before_teardown([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(g_decode_ms));
    return true;
  });
}

// Plays CUPTI calling the collector at the exit of an API call returning rc
// (the fake libcupti's fake_api_exit; a test with no such fake fails here).
inline void api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int rc) {
  auto fn = reinterpret_cast<void (*)(CUpti_CallbackDomain, CUpti_CallbackId, int)>(
      dlsym(RTLD_DEFAULT, "fake_api_exit"));
  ASSERT_NE(fn, nullptr);
  fn(domain, cbid, rc);
}

inline const std::string kRuntimeOn = "enable " + std::to_string(CUPTI_ACTIVITY_KIND_RUNTIME);

// Tracing off and on from a job thread (may wait for the lock) or the writer thread.
inline bool off(bool may_wait = true) {
  std::string why;
  return cupti_source::set_tracing(false, may_wait, why) == cupti_source::Switched::yes;
}
inline bool on(bool may_wait = true) {
  std::string why;
  const bool done = cupti_source::set_tracing(true, may_wait, why) == cupti_source::Switched::yes;
  EXPECT_EQ(why, "");
  return done;
}

// An ordinary call (cudaLaunchKernel, fake cbid 2) returns on a job thread.
inline void launch_exit() { api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, 2, 0); }

// Every test of a file that includes this: whatever it did, CUPTI's state moved only along the table.
class NoIllegalTransitions : public ::testing::Environment {
 public:
  void TearDown() override { EXPECT_EQ(cupti_source::illegal_transitions(), 0u); }
};
inline const auto* const kNoIllegalTransitions = ::testing::AddGlobalTestEnvironment(new NoIllegalTransitions);

}  // namespace gpuscope::collector
