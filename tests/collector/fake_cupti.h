// A stand-in for CUPTI's record iterator so that collector logic runs in CI
// without a GPU. Buffers are built from real CUPTI record structs, each framed
// by an 8-byte length, and walked the way cuptiActivityGetNextRecord walks them.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "collector/cupti_api.h"

namespace gpuscope::test {

class FakeBuffer {
 public:
  template <class Record> void add(const Record& r) { add_bytes(&r, sizeof r); }
  void add_bytes(const void* p, size_t n) {
    uint64_t len = n;
    size_t at = bytes_.size();
    bytes_.resize(at + 8 + ((n + 7) & ~size_t{7}));
    std::memcpy(bytes_.data() + at, &len, 8);
    std::memcpy(bytes_.data() + at + 8, p, n);
  }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<uint8_t> bytes_;
};

inline CUptiResult fake_next_record(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  size_t pos = 0;
  if (*record) {
    auto* prev = reinterpret_cast<uint8_t*>(*record);
    uint64_t len = 0;
    std::memcpy(&len, prev - 8, 8);
    pos = static_cast<size_t>(prev - buffer) + ((len + 7) & ~uint64_t{7});
  }
  if (pos >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (pos + 8 > valid) return CUPTI_ERROR_INVALID_KIND;
  uint64_t len = 0;
  std::memcpy(&len, buffer + pos, 8);
  if (pos + 8 + len > valid || len < sizeof(CUpti_ActivityKind)) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + pos + 8);
  return CUPTI_SUCCESS;
}

inline CUptiResult fake_callback_name(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  static const char* kRuntime[] = {"", "cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaStreamSynchronize_v3020",
                                   "cudaGetDevice_v3020"};
  static const char* kDriver[] = {"", "cuLaunchKernel", "cuMemAlloc_v2"};
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < 5) {
    *name = kRuntime[cbid];
    return CUPTI_SUCCESS;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < 3) {
    *name = kDriver[cbid];
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

inline collector::CuptiApi fake_api() {
  collector::CuptiApi api;
  api.get_next_record = fake_next_record;
  api.get_callback_name = fake_callback_name;
  return api;
}

}  // namespace gpuscope::test
