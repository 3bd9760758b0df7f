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
#include <string>
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
// duty cycle says so, and returns whether what follows is traced. Untraced
// from there, CUPTI is torn down before it returns (cupti_source::at_step_boundary):
// record's sampled stretches, its control stretch and on-demand captures alike.
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

// ---- Captures on demand (Config::on_demand; collector/ondemand.cpp drives
// them). The job is untraced and nothing is recorded (g_enabled off) until a
// capture begins; at the step boundary it begins at, recording starts, the
// control stretch runs untraced (`control_steps` steps, at least
// `control_min_ns`), then `steps` steps (or `seconds_ns`, ended at a step
// boundary) are traced, and at the boundary that ends them tracing and
// recording stop (phase done) until ondemand.cpp has closed the file and
// calls capture_reset. Without steps (no torch plugin) a capture is timed by
// the writer's ticks: traced from its start for `seconds_ns`, no control stretch.
enum class Phase { idle, waiting, control, traced, done };
struct CapturePlan {
  uint64_t start_step = 0;  // begins at the boundary after which this many steps have ended; 0: the next
  uint64_t steps = 0;       // traced steps; 0 with seconds_ns 0: until capture_end_now
  uint64_t seconds_ns = 0;
  uint64_t control_steps = 0, control_min_ns = 0;
};
// idle -> waiting; false with a reason when a capture is under way or the
// start step has passed.
bool capture_begin(const CapturePlan& plan, std::string& why);
// Ends a capture now, from any thread (its traced stretch ends here, not at a
// step boundary): phase done. CUPTI's teardown is then armed for the next API
// exit; ondemand.cpp's finish makes one (cupti_source::tear_down_here) if the
// job makes none.
void capture_end_now(uint64_t now);
// done (or waiting, abandoned) -> idle.
void capture_reset();
Phase capture_phase();
// Steps ended so far (the job's step boundaries, counted from the start).
uint64_t steps_ended();
// The median of the last (up to 64) dormant steps, ns; 0 before 8 of them.
uint64_t median_step_ns();
// The traced steps of the last capture, numbered as steps_ended() counts
// (first > last when none was traced).
void captured_steps(uint64_t& first, uint64_t& last);

// Automatic captures while idle: a step longer than `slow_factor` times the
// median of the last steps, or `every_ns` since the last capture; at most one
// per `cooldown_ns`. A zero rule disarms.
// The capture begins at the very boundary where the rule fires (the step
// after the slow one is the first recorded), with `plan` (its start_step
// ignored); ondemand.cpp opens its file meanwhile (the rings hold the records).
struct Rule {
  double slow_factor = 0;
  uint64_t every_ns = 0, cooldown_ns = 0;
  CapturePlan plan;
};
void set_rule(const Rule& rule, uint64_t now);
// Why the rule fired since the last call (empty: it did not); its capture has
// begun then, and its file is ondemand.cpp's to open.
std::string take_rule_fired();
// When the capture under way began recording (the boundary that left
// waiting); 0 while waiting.
uint64_t capture_start_ns();
// Called before tracing switches on (on demand: CUPTI is subscribed only
// then, the first time; collector.cpp).
void set_cupti_starter(void (*start)());
// Called, on the thread that ended a step, when a capture reached done or a
// rule fired: it must only wake ondemand.cpp's thread (one write to a pipe).
void set_attention_hook(void (*hook)());

}  // namespace gpuscope::collector::schedule
