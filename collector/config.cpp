#include "collector/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/output_name.h"

namespace gpuscope::collector {
namespace {

uint64_t env_u64(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : 0;
}

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "0";
}

}  // namespace

Config load_config() {
  Config c;
  const char* out = std::getenv("GPUSCOPE_OUTPUT");
  c.output = expand_output_name(out && *out ? out : "gpuscope_%p.db", getpid());
  // Default without GPUSCOPE_TRACE: cuda,nvtx,torch (see cli/record_command.cpp on memory and nvml).
  c.memory = c.nvml = false;
  if (const char* trace = std::getenv("GPUSCOPE_TRACE")) {
    c.cuda = c.nvtx = c.memory = c.torch = c.nvml = false;
    std::stringstream ss(trace);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item == "cuda") c.cuda = true;
      if (item == "nvtx") c.nvtx = true;
      if (item == "memory") c.memory = true;
      if (item == "torch") c.torch = true;
      if (item == "nvml") c.nvml = true;
    }
  }
  c.driver_api = !env_off("GPUSCOPE_DRIVER_API");
  c.runtime_api = !env_off("GPUSCOPE_RUNTIME_API");
  c.periodic_flush = !env_off("GPUSCOPE_PERIODIC_FLUSH");
  c.origin_ns = env_u64("GPUSCOPE_ORIGIN_NS");
  c.window_start_ns = env_u64("GPUSCOPE_WINDOW_START_NS");
  c.window_end_ns = env_u64("GPUSCOPE_WINDOW_END_NS");
  if (const char* sample = std::getenv("GPUSCOPE_SAMPLE_MS")) {
    char* rest = nullptr;
    c.sample_on_ms = std::strtoull(sample, &rest, 10);
    if (rest && *rest == ',') c.sample_off_ms = std::strtoull(rest + 1, nullptr, 10);
    if (c.sample_on_ms == 0) c.sample_off_ms = 0;
  }
  if (const char* control = std::getenv("GPUSCOPE_CONTROL_STEPS")) {
    // "0" turns it off; "W,C[,MS]" sets it; anything else keeps the default.
    unsigned long long w = 0, n = 0, ms = c.control_min_ms;
    const int got = std::sscanf(control, "%llu,%llu,%llu", &w, &n, &ms);
    if (std::string(control) == "0") {
      c.control_steps = 0;
    } else if (got >= 2) {
      c.control_warmup_steps = w;
      c.control_steps = n;
      c.control_min_ms = ms;
    }
  }
  if (!c.torch) c.control_steps = 0;  // steps come from the torch plugin
  // Tearing CUPTI down while untraced is what makes the untraced stretches
  // cheap, so it is on wherever tracing switches (GPUSCOPE_CUPTI_FINALIZE=0: off).
  const bool switches = c.sample_off_ms > 0 || c.window_start_ns > 0 || c.window_end_ns > 0 || c.control();
  c.finalize_when_off = std::getenv("GPUSCOPE_CUPTI_FINALIZE") ? !env_off("GPUSCOPE_CUPTI_FINALIZE") : switches;
  return c;
}

bool Config::traced_at(uint64_t now, uint64_t epoch_ns) const {
  if (now < window_start_ns || (window_end_ns != 0 && now > window_end_ns)) return false;
  if (sample_on_ms == 0 || sample_off_ms == 0) return true;
  uint64_t epoch = std::max(epoch_ns, window_start_ns);
  if (now < epoch) return true;
  uint64_t period = (sample_on_ms + sample_off_ms) * 1000000ull;
  return (now - epoch) % period < sample_on_ms * 1000000ull;
}

}  // namespace gpuscope::collector
