#include "collector/device_query.h"

#include <dlfcn.h>

#include <cstddef>

namespace gpuscope::collector {
namespace {

// CUdevice_attribute values (cuda.h), the ones CUPTI's device record carries.
enum Attribute : int {
  kClockRateKhz = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRateKhz = 36,
  kMemoryBusWidthBits = 37,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
};

}  // namespace

std::vector<store::DeviceRow> query_devices() {
  std::vector<store::DeviceRow> rows;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return rows;
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  using Attr = int (*)(int*, int, int);
  using TotalMem = int (*)(size_t*, int);
  using Uuid = int (*)(unsigned char*, int);  // CUuuid: 16 bytes
  auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<Name>(dlsym(lib, "cuDeviceGetName"));
  auto attr = reinterpret_cast<Attr>(dlsym(lib, "cuDeviceGetAttribute"));
  auto total = reinterpret_cast<TotalMem>(dlsym(lib, "cuDeviceTotalMem_v2"));
  auto uuid = reinterpret_cast<Uuid>(dlsym(lib, "cuDeviceGetUuid_v2"));
  if (!uuid) uuid = reinterpret_cast<Uuid>(dlsym(lib, "cuDeviceGetUuid"));
  int n = 0;
  if (count && get && count(&n) == 0) {
    for (int i = 0; i < n; ++i) {
      int dev = 0;
      if (get(&dev, i) != 0) continue;
      store::DeviceRow r;
      r.id = i;
      char text[256] = {};
      if (name && name(text, sizeof text - 1, dev) == 0) r.name = text;
      unsigned char bytes[16] = {};
      if (uuid && uuid(bytes, dev) == 0) {
        static const char* hex = "0123456789abcdef";
        for (unsigned char b : bytes) {
          r.uuid += hex[b >> 4];
          r.uuid += hex[b & 15];
        }
      }
      const auto attribute = [&](int which) {
        int v = 0;
        return attr && attr(&v, which, dev) == 0 ? int64_t{v} : int64_t{0};
      };
      r.sm_count = attribute(kMultiprocessorCount);
      r.compute_major = attribute(kComputeCapabilityMajor);
      r.compute_minor = attribute(kComputeCapabilityMinor);
      r.core_clock_khz = attribute(kClockRateKhz);
      // As CUPTI's globalMemoryBandwidth: double data rate over the bus, bytes per second.
      r.memory_bandwidth = attribute(kMemoryClockRateKhz) * 1000 * 2 * (attribute(kMemoryBusWidthBits) / 8);
      size_t bytes_total = 0;
      if (total && total(&bytes_total, dev) == 0) r.total_memory = static_cast<int64_t>(bytes_total);
      rows.push_back(std::move(r));
    }
  }
  dlclose(lib);
  return rows;
}

}  // namespace gpuscope::collector
