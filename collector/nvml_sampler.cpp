#include "collector/nvml_sampler.h"

#include <dlfcn.h>

namespace gpuscope::collector {

// The few NVML declarations we use; NVML's header is not part of the toolkit image.
struct NvmlSampler::Api {
  struct Utilization { unsigned gpu, memory; };
  struct Memory { unsigned long long total, free, used; };
  using Device = void*;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  Device devices[64] = {};
};

bool NvmlSampler::start() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) return false;
  auto* a = new Api;
  a->init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
  a->shutdown = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlShutdown"));
  a->count = reinterpret_cast<int (*)(unsigned*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  a->handle = reinterpret_cast<int (*)(unsigned, Api::Device*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  a->utilization = reinterpret_cast<int (*)(Api::Device, Api::Utilization*)>(dlsym(lib, "nvmlDeviceGetUtilizationRates"));
  a->memory = reinterpret_cast<int (*)(Api::Device, Api::Memory*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
  a->power = reinterpret_cast<int (*)(Api::Device, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  a->clock = reinterpret_cast<int (*)(Api::Device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  unsigned n = 0;
  if (!a->init || !a->count || !a->handle || a->init() != 0 || a->count(&n) != 0 || n == 0) {
    delete a;
    return false;
  }
  devices_ = 0;
  for (unsigned i = 0; i < n && i < 64; ++i)
    if (a->handle(i, &a->devices[devices_]) == 0) ++devices_;
  api_ = a;
  return devices_ > 0;
}

void NvmlSampler::sample(uint64_t now, RowSink& sink) {
  if (!api_ || !sink.in_window(now)) return;
  auto put = [&](unsigned dev, std::string_view name, double value) {
    store::CounterRow r;
    r.pid = sink.pid;
    r.device = dev;
    r.name = name;
    r.ts = sink.rel(now);
    r.value = value;
    sink.writer.add(r);
    sink.count("records_nvml");
  };
  for (unsigned d = 0; d < devices_; ++d) {
    Api::Utilization u{};
    if (api_->utilization && api_->utilization(api_->devices[d], &u) == 0) put(d, "nvml_sm_util_pct", u.gpu);
    Api::Memory m{};
    if (api_->memory && api_->memory(api_->devices[d], &m) == 0) put(d, "nvml_memory_used_bytes", double(m.used));
    unsigned mw = 0;
    if (api_->power && api_->power(api_->devices[d], &mw) == 0) put(d, "nvml_power_w", mw / 1000.0);
    unsigned mhz = 0;
    if (api_->clock && api_->clock(api_->devices[d], 1 /* NVML_CLOCK_SM */, &mhz) == 0)
      put(d, "nvml_sm_clock_mhz", mhz);
  }
}

void NvmlSampler::stop() {
  if (api_ && api_->shutdown) api_->shutdown();
  delete api_;
  api_ = nullptr;
}

}  // namespace gpuscope::collector
