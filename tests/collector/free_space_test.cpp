#include "collector/free_space.h"

#include <gtest/gtest.h>

namespace gpuscope::collector {
namespace {

constexpr uint64_t kMb = 1ull << 20;
constexpr uint64_t kTick = 100'000'000;  // the writer checks every 100 ms

TEST(FreeSpace, StopsBelowTheFloorOnly) {
  FreeSpaceGuard guard(256 * kMb);
  EXPECT_FALSE(guard.low(10'000 * kMb, 0));
  EXPECT_FALSE(guard.low(10'000 * kMb, kTick));
  // 9 700 MB over an hour is 2.7 MB a second: 44 MB above the floor is enough.
  EXPECT_FALSE(guard.low(300 * kMb, kTick + 3600'000'000'000ull));
  EXPECT_TRUE(guard.low(255 * kMb, kTick + 7200'000'000'000ull));
}

TEST(FreeSpace, StopsWhenTheDiskWouldReachTheFloorWithinASecond) {
  FreeSpaceGuard guard(256 * kMb);
  EXPECT_FALSE(guard.low(2'000 * kMb, 0));
  // 100 MB a tick is 1 GB a second: 1 644 MB above the floor is enough.
  EXPECT_FALSE(guard.low(1'900 * kMb, kTick));
  EXPECT_FALSE(guard.low(1'850 * kMb, 2 * kTick));
  // 700 MB in a tick, 7 GB a second: 894 MB above the floor is not.
  EXPECT_TRUE(guard.low(1'150 * kMb, 3 * kTick));
}

TEST(FreeSpace, SpaceComingBackIsNoRate) {
  FreeSpaceGuard guard(256 * kMb);
  EXPECT_FALSE(guard.low(300 * kMb, 0));
  EXPECT_FALSE(guard.low(5'000 * kMb, kTick));  // a file was deleted
  EXPECT_FALSE(guard.low(4'990 * kMb, 2 * kTick));
}

TEST(FreeSpace, FloorZeroNeverStops) {
  FreeSpaceGuard guard(0);
  EXPECT_FALSE(guard.low(0, 0));
  EXPECT_FALSE(guard.low(0, kTick));
}

}  // namespace
}  // namespace gpuscope::collector
