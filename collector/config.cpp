#include "collector/config.h"

#include <unistd.h>

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
  return c;
}

}  // namespace gpuscope::collector
