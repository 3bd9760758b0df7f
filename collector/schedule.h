// Sampled tracing: when the job is traced (CUPTI activities on, the torch
// plugin's op callback on) and when it runs untraced, from the duty cycle
// (GPUSCOPE_SAMPLE_MS, `gpuscope record --sample`) and the window
// (GPUSCOPE_WINDOW_START_NS/END_NS, `--delay`, `--duration`) in Config.
//
// With the torch plugin, tracing switches only at step boundaries (the plugin
// calls on_step_boundary after each step it emits), so every step is traced
// whole or not at all. Without steps (no plugin, or none for a full period),
// the writer thread switches by time (windows always do). Each traced stretch is written as a
// `range` row (source `sampling_window`) so the analyzer knows which steps
// were traced.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/config.h"

namespace gpuscope::collector::schedule {

struct Window {
  uint64_t start = 0, end = 0;  // collector clock, ns
};

// Whether tracing follows a schedule at all: a duty cycle, or a window
// (--delay, --duration). Else everything is traced and the calls below do
// nothing.
bool scheduled(const Config& config);

// At the collector's start: the duty cycle counts from here.
void begin(const Config& config, uint64_t now);

// From the plugin, on the thread that ended the step: switches tracing if the
// duty cycle says so, and returns whether what follows is traced.
bool on_step_boundary(const Config& config, uint64_t now);

// From the writer thread, every tick: switches by time when no step boundary
// came for a whole period.
void on_tick(const Config& config, uint64_t now);

// A plugin that reports step boundaries is active: wait for its steps (up to a
// period) before switching by time, and tell it of every switch (and now of
// the current state) through `plugin_set_traced` when it exports one.
void expect_steps(void (*plugin_set_traced)(int));

// Whether the job is traced now (one relaxed load).
bool traced();

// Traced stretches that have ended since the last call; at the end of the
// recording (`final`), the open one too, ending at `now`.
std::vector<Window> take_windows(bool final, uint64_t now);

// Untraced stretches measured on the GPU (cupti_source::take_untraced_span)
// since the last call.
std::vector<Window> take_untraced();

}  // namespace gpuscope::collector::schedule
