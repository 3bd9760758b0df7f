#include "collector/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "common/output_name.h"
#include "common/settings.h"
#include "common/steps_window.h"

namespace gpuscope::collector {

Config load_config() {
  using settings::Id;
  Config c;
  const char* out = settings::text(Id::kOutput);
  c.output = expand_output_name(out ? out : "gpuscope_%p.db", getpid());
  // Default without GPUSCOPE_TRACE: cuda,nvtx,torch (see cli/record_command.cpp on memory and nvml).
  c.memory = c.nvml = c.overhead = false;
  if (const char* trace = settings::raw(Id::kTrace)) {
    c.cuda = c.nvtx = c.memory = c.torch = c.nvml = c.overhead = false;
    std::stringstream ss(trace);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item == "cuda") c.cuda = true;
      if (item == "nvtx") c.nvtx = true;
      if (item == "memory") c.memory = true;
      if (item == "torch") c.torch = true;
      if (item == "nvml") c.nvml = true;
      if (item == "overhead") c.overhead = true;
    }
  }
  c.driver_api = !settings::equals(Id::kDriverApi, "0");
  c.runtime_api = !settings::equals(Id::kRuntimeApi, "0");
  c.periodic_flush = !settings::equals(Id::kPeriodicFlush, "0");
  if (settings::is_set(Id::kMinFreeMb)) c.min_free_bytes = settings::u64(Id::kMinFreeMb) << 20;
  if (const char* attrs = settings::raw(Id::kCuptiAttributes)) {
    std::stringstream list(attrs);
    std::string item;
    while (std::getline(list, item, ',')) {
      unsigned long long n = 0, v = 0;
      if (std::sscanf(item.c_str(), "%llu=%llu", &n, &v) == 2) c.cupti_attributes.emplace_back(n, v);
    }
  }
  c.origin_ns = settings::u64(Id::kOriginNs);
  c.window_start_ns = settings::u64(Id::kWindowStartNs);
  c.window_end_ns = settings::u64(Id::kWindowEndNs);
  if (const char* sample = settings::raw(Id::kSampleMs)) {
    char* rest = nullptr;
    c.sample_on_ms = std::strtoull(sample, &rest, 10);
    if (rest && *rest == ',') c.sample_off_ms = std::strtoull(rest + 1, nullptr, 10);
    if (c.sample_on_ms == 0) c.sample_off_ms = 0;
  }
  if (const char* control = settings::raw(Id::kControlSteps)) {
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
  if (const char* steps = settings::raw(Id::kTraceSteps)) {
    if (std::string(steps) == kOnDemandSteps) {
      c.on_demand = true;
    } else if (!parse_steps_window(steps, c.steps_first, c.steps_last)) {
      std::fprintf(stderr, "gpuscope: %s=%s is not A-B, A- or %s (A <= B): every step traced\n",
                   settings::name(Id::kTraceSteps), steps, kOnDemandSteps);
    } else {
      c.steps_window = true;
    }
  }
  if (!c.torch) c.control_steps = 0;  // steps come from the torch plugin
  // Tearing CUPTI down while untraced is what makes the untraced stretches
  // cheap, so it is on wherever tracing switches (GPUSCOPE_CUPTI_FINALIZE=0: off).
  c.finalize_when_off =
      settings::is_set(Id::kCuptiFinalize) ? !settings::equals(Id::kCuptiFinalize, "0") : c.switches();
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
