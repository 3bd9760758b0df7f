// Recording settings, read once from the environment that `gpuscope record`
// (or the user) set, through the typed settings table
// (trace_formats/common/settings.h, which holds each one's default, parser and
// meaning): output, sources, window, duty cycle, control stretch, and the
// switches below that take single costs out when measuring overhead
// (GPUSCOPE_DRIVER_API=0, GPUSCOPE_RUNTIME_API=0). The defaults below are the
// table's. The torch plugin reads its own (GPUSCOPE_TORCH_*) through the same table.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trace_formats/common/settings.h"

namespace gpuscope::collector {

// The table's default of setting `id`.
template <settings::Id id>
auto table_default() {
  return settings::Entry<id>::default_value();
}

struct Config {
  std::string output;  // %p, %h, %q{VAR} expanded
  bool cuda = table_default<settings::Id::kTrace>().cuda, nvtx = table_default<settings::Id::kTrace>().nvtx,
       memory = table_default<settings::Id::kTrace>().memory, torch = table_default<settings::Id::kTrace>().torch,
       nvml = table_default<settings::Id::kTrace>().nvml;
  // `overhead`: CUPTI's records of its own overhead (buffer flushes,
  // instrumentation, lazy loading, waits for command-buffer space), stored as
  // ranges on the threads they hit (range source tracer_overhead). Opt-in.
  bool overhead = table_default<settings::Id::kTrace>().overhead;
  bool driver_api = table_default<settings::Id::kDriverApi>();
  bool runtime_api = table_default<settings::Id::kRuntimeApi>();  // GPUSCOPE_RUNTIME_API=0: no runtime API records
  // GPUSCOPE_PERIODIC_FLUSH=0: CUPTI hands over only full buffers
  bool periodic_flush = table_default<settings::Id::kPeriodicFlush>();
  // GPUSCOPE_MIN_FREE_MB: the recording stops before its file system has less
  // free (a training job's checkpoints and logs need the disk too); 0: never.
  uint64_t min_free_bytes = table_default<settings::Id::kMinFreeMb>() << 20;
  // GPUSCOPE_CUPTI_ATTRIBUTES: CUPTI activity attributes (number, value) set at subscription.
  std::vector<std::pair<uint32_t, uint64_t>> cupti_attributes;
  uint64_t origin_ns = 0;  // 0: taken from the database or now
  uint64_t window_start_ns = 0, window_end_ns = 0;
  // GPU tracing in a duty cycle (GPUSCOPE_SAMPLE_MS=ON,OFF): CUPTI activities
  // on for ON ms, off for OFF ms, from the collector's start or the window start.
  uint64_t sample_on_ms = 0, sample_off_ms = 0;
  // The control stretch (GPUSCOPE_CONTROL_STEPS=WARMUP,STEPS[,MIN_MS], default
  // 3,8,200): with steps from the torch plugin and no duty cycle or window,
  // the steps after the first WARMUP run untraced, STEPS of them and at least
  // MIN_MS, then the rest is traced. Their duration is the job's step time
  // without tracing, which the analyzer judges findings against. "0": off
  // (`gpuscope record --full`).
  uint64_t control_warmup_steps = table_default<settings::Id::kControlSteps>().warmup,
           control_steps = table_default<settings::Id::kControlSteps>().steps,
           control_min_ms = table_default<settings::Id::kControlSteps>().min_ms;
  // A window of torch steps (GPUSCOPE_TRACE_STEPS=A-B, `record --steps`): steps
  // A to B traced (numbered from 0 as the recording numbers them), the others
  // not; without torch steps nothing is traced.
  bool steps_window = false;
  uint64_t steps_first = 0, steps_last = UINT64_MAX;
  // On demand (GPUSCOPE_TRACE_STEPS=on-demand, `record --on-demand`): the
  // collector stays dormant (no writer, no CUPTI, no op callback; step
  // boundaries counted) until a capture is asked for (collector/ondemand.h);
  // each capture is its own recording. The control stretch's STEPS and MS
  // (control_steps, control_min_ms) precede each capture's traced steps.
  bool on_demand = false;
  // Meta rows the writer sets when it opens the file (a capture's: what
  // started it, and what the plugin said while the job was dormant).
  std::vector<std::pair<std::string, std::string>> meta;
  bool duty_cycle() const { return sample_on_ms > 0 && sample_off_ms > 0; }
  bool window() const { return window_end_ns != 0 || window_start_ns > origin_ns; }
  bool control() const { return control_steps > 0 && !duty_cycle() && !window() && !steps_window && !on_demand; }
  // Whether tracing switches on and off during the job (a duty cycle, a time
  // window, the control stretch, a steps window or captures on demand): the
  // schedule runs only then.
  bool switches() const { return duty_cycle() || window() || control() || steps_window || on_demand; }
  // Whether the step numbered `step` (from 0) is inside the steps window (all are without one).
  bool step_in_window(uint64_t step) const { return !steps_window || (step >= steps_first && step <= steps_last); }
  // cuptiFinalize while tracing is off (at step boundaries, CUDA driver 12.6 or
  // later): on by default for duty cycles and windows, GPUSCOPE_CUPTI_FINALIZE=0|1.
  bool finalize_when_off = false;

  // Whether GPU activity should be traced at `now` (ns, the collector's clock),
  // for a duty cycle counted from `epoch_ns`.
  bool traced_at(uint64_t now, uint64_t epoch_ns) const;
};

Config load_config();

}  // namespace gpuscope::collector
