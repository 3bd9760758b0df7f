// The devices of a capture on demand, asked of the driver (collector/device_query.h),
// against the fake libcuda.so.1, which describes one H100.
#include "collector/device_query.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace gpuscope::collector {
namespace {

TEST(DeviceQuery, NoneWithoutLibcuda) { EXPECT_TRUE(query_devices().empty()); }

TEST(DeviceQuery, AsCuptisDeviceRecordWouldSayThem) {
  ASSERT_NE(dlopen(FAKE_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  const auto rows = query_devices();
  ASSERT_EQ(rows.size(), 1u);
  const store::DeviceRow& d = rows[0];
  EXPECT_EQ(d.id, 0);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.uuid, "00112233445566778899aabbccddeeff");
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_EQ(d.compute_minor, 0);
  EXPECT_EQ(d.core_clock_khz, 1980000);
  EXPECT_EQ(d.total_memory, 85029158912);
  EXPECT_EQ(d.memory_bandwidth, 3352320000000);  // 2619 MHz, double data rate, 640 bytes wide: 3.35 TB/s
}

}  // namespace
}  // namespace gpuscope::collector
