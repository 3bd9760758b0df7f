#include "collector/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "trace_formats/common/output_name.h"
#include "trace_formats/common/settings.h"

namespace gpuscope::collector {

Config load_config() {
  using settings::Id;
  Config c;
  c.output = expand_output_name(settings::value<Id::kOutput>(), getpid());
  // Default without GPUSCOPE_TRACE: cuda,nvtx,torch (see cli/record_command.cpp on memory and nvml).
  const auto sources = settings::value<Id::kTrace>();
  c.cuda = sources.cuda;
  c.nvtx = sources.nvtx;
  c.torch = sources.torch;
  c.memory = sources.memory;
  c.nvml = sources.nvml;
  c.overhead = sources.overhead;
  c.driver_api = settings::value<Id::kDriverApi>();
  c.runtime_api = settings::value<Id::kRuntimeApi>();
  c.periodic_flush = settings::value<Id::kPeriodicFlush>();
  c.min_free_bytes = settings::value<Id::kMinFreeMb>() << 20;
  c.cupti_attributes = settings::value<Id::kCuptiAttributes>();
  c.origin_ns = settings::value<Id::kOriginNs>();
  c.window_start_ns = settings::value<Id::kWindowStartNs>();
  c.window_end_ns = settings::value<Id::kWindowEndNs>();
  const auto sample = settings::value<Id::kSampleMs>();
  c.sample_on_ms = sample.on_ms;
  c.sample_off_ms = sample.off_ms;
  const auto control = settings::value<Id::kControlSteps>();
  c.control_warmup_steps = control.warmup;
  c.control_steps = control.steps;
  c.control_min_ms = control.min_ms;
  const auto steps = settings::read<Id::kTraceSteps>();
  if (!steps.warning.empty()) std::fprintf(stderr, "gpuscope: %s: every step traced\n", steps.warning.c_str());
  c.on_demand = steps.value.mode == settings::StepsWindow::Mode::kOnDemand;
  c.steps_window = steps.value.mode == settings::StepsWindow::Mode::kWindow;
  c.steps_first = steps.value.first;
  c.steps_last = steps.value.last;
  if (!c.torch) c.control_steps = 0;  // steps come from the torch plugin
  // Tearing CUPTI down while untraced is what makes the untraced stretches
  // cheap, so it is on wherever tracing switches (GPUSCOPE_CUPTI_FINALIZE=0: off).
  c.finalize_when_off = settings::value<Id::kCuptiFinalize>().value_or(c.switches());
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
