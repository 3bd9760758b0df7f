// When the collector traces GPU activity: capture windows (--delay,
// --duration) and duty cycles (GPUSCOPE_SAMPLE_MS).
#include <gtest/gtest.h>

#include <cstdlib>

#include "collector/config.h"

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
  unsetenv("GPUSCOPE_SAMPLE_MS");
  unsetenv("GPUSCOPE_CUPTI_FINALIZE");
}

}  // namespace
}  // namespace gpuscope::collector
