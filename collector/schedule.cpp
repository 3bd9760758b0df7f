#include "collector/schedule.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "collector/clock.h"
#include "collector/cupti_source.h"
#include "collector/emit.h"
#include "schema/enums.h"

namespace gpuscope::collector::schedule {
namespace {

std::mutex g_mutex;  // switches are rare: a few per period
std::atomic<bool> g_traced{true};
std::atomic<uint64_t> g_last_step_ns{0};
std::atomic<bool> g_expect_steps{false};
uint64_t g_epoch_ns = 0;
uint64_t g_open_start = 0;  // start of the traced stretch now open; 0 = untraced
std::vector<Window> g_done;
std::vector<Window> g_untraced;  // measured untraced stretches, not yet written
void (*g_plugin_hook)(int) = nullptr;  // under g_mutex
// The control stretch (Config::control), under g_mutex: steps ended so far, and
// the stretch's state, start and untraced steps ended in it.
enum class Control { kBefore, kIn, kDone };
Control g_control = Control::kBefore;
uint64_t g_steps_ended = 0, g_control_start_ns = 0, g_control_steps = 0;

// Holds g_mutex. `may_wait`: false on the writer thread, which must not wait
// for a teardown under way on a job thread (it waits for the writer to
// decode): the switch is then left to the next tick. `entered`: the clock when
// the caller, given `now`, began (see the stretch's end below).
void switch_to(bool on, bool may_wait, uint64_t now, uint64_t entered) {
  if (on == g_traced.load(std::memory_order_relaxed)) return;
  std::string why;
  const cupti_source::Switched done = cupti_source::set_tracing(on, may_wait, why);
  if (done == cupti_source::Switched::busy) return;
  if (done == cupti_source::Switched::no) {
    // Could not resume CUPTI: stay untraced rather than record ops without kernels.
    std::fprintf(stderr, "gpuscope: GPU tracing could not resume: %s\n", why.c_str());
    emit_message(now, schema::severity::warning, "GPU tracing could not resume: " + why);
    return;
  }
  static bool said_partial = false;  // resumed without some activity kinds: said once
  if (!why.empty() && !said_partial) {
    std::fprintf(stderr, "gpuscope: %s\n", why.c_str());
    emit_message(now, schema::severity::warning, why);
    said_partial = true;
  }
  static bool said_graphs = false;  // teardown given up for CUDA graphs: said once
  if (!on && cupti_source::kept_for_graphs() && !said_graphs) {
    const char* text =
        "CUDA graphs in this job: CUPTI stays initialized while untraced (a torn-down CUPTI makes the first "
        "replay after each resume wait for all queued work), so untraced steps still pay CUPTI's launch cost";
    std::fprintf(stderr, "gpuscope: %s\n", text);
    emit_message(now, schema::severity::info, text);
    said_graphs = true;
  }
  g_traced.store(on, std::memory_order_relaxed);
  if (g_plugin_hook) g_plugin_hook(on ? 1 : 0);
  if (on) {
    uint64_t a = 0, b = 0;
    if (cupti_source::take_untraced_span(a, b)) g_untraced.push_back({a, b});
    g_open_start = now;
  } else if (g_open_start) {
    // The stretch ends once CUPTI and the plugin are both off: the job runs on
    // during the forced flush (milliseconds), and what it did then was traced.
    // Counted from the caller's start, not this function's: on the writer
    // thread a preemption or the CUPTI check before the switch can take
    // microseconds to milliseconds, and the job's ops run on meanwhile.
    g_done.push_back({g_open_start, now + (now_ns() - entered)});
    g_open_start = 0;
  }
}

bool wanted(const Config& config, uint64_t now) {
  // The next step is numbered g_steps_ended (from 0).
  if (!g_epoch_ns) {  // the first call: traced from here unless a window starts later
    g_epoch_ns = now;
    const bool on = config.traced_at(now, now) && config.step_in_window(g_steps_ended);
    g_traced.store(on, std::memory_order_relaxed);
    g_open_start = on ? now : 0;
  }
  return config.traced_at(now, g_epoch_ns) && g_control != Control::kIn && config.step_in_window(g_steps_ended);
}

// Holds g_mutex. Advances the control stretch at the end of a step (counted by the caller).
void count_control_step(const Config& config, uint64_t now) {
  if (g_control == Control::kBefore && g_steps_ended >= config.control_warmup_steps) {
    g_control = Control::kIn;
    g_control_start_ns = now;
    g_control_steps = 0;
  } else if (g_control == Control::kIn && ++g_control_steps >= config.control_steps &&
             now - g_control_start_ns >= config.control_min_ms * 1000000ull) {
    g_control = Control::kDone;
  }
}

}  // namespace

bool scheduled(const Config& config) { return config.switches(); }

void begin(const Config& config, uint64_t now) {
  if (!scheduled(config)) return;
  std::lock_guard lock(g_mutex);
  wanted(config, now);
}

bool on_step_boundary(const Config& config, uint64_t now) {
  if (!scheduled(config)) return true;
  const uint64_t entered = now_ns();
  g_last_step_ns.store(now, std::memory_order_relaxed);
  std::lock_guard lock(g_mutex);
  ++g_steps_ended;
  if (config.control()) count_control_step(config, now);
  switch_to(wanted(config, now), true, now, entered);
  return g_traced.load(std::memory_order_relaxed);
}

void on_tick(const Config& config, uint64_t now) {
  if (!scheduled(config)) return;
  const uint64_t entered = now_ns();
  const uint64_t period_ns = (config.sample_on_ms + config.sample_off_ms) * 1000000ull;
  const uint64_t last_step = g_last_step_ns.load(std::memory_order_relaxed);
  // A switch under way on the job's thread may be waiting for this (writer)
  // thread to decode before a teardown: never wait for it here.
  std::unique_lock lock(g_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  const bool want = wanted(config, now);
  // CUDA may have started while a switch was under way: CUPTI follows.
  std::string why;
  cupti_source::set_tracing(g_traced.load(std::memory_order_relaxed), false, why);
  // The control stretch and a steps window count steps only: without steps the
  // first traces everything, the second nothing (or from step 0 on).
  if (config.control() || config.steps_window) return;
  // Duty cycles: steps drive the switches; by time only when none came for a
  // whole period (counted from the start while waiting for the first).
  // Windows alone (period 0) switch by time.
  if (g_expect_steps.load(std::memory_order_relaxed) && now - (last_step ? last_step : g_epoch_ns) < period_ns) return;
  switch_to(want, false, now, entered);
}

bool traced() { return g_traced.load(std::memory_order_relaxed); }

void expect_steps(void (*plugin_set_traced)(int)) {
  g_expect_steps.store(true, std::memory_order_relaxed);
  if (!plugin_set_traced) return;
  std::lock_guard lock(g_mutex);
  g_plugin_hook = plugin_set_traced;
  if (g_epoch_ns) plugin_set_traced(g_traced.load(std::memory_order_relaxed) ? 1 : 0);
}

std::vector<Window> take_windows(bool final, uint64_t now) {
  std::vector<Window> out;
  std::unique_lock lock(g_mutex, std::defer_lock);
  if (final) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return out;  // a switch is under way (see on_tick); the next tick takes them
  }
  out.swap(g_done);
  if (final && g_open_start && g_epoch_ns) {
    out.push_back({g_open_start, now});
    g_open_start = 0;
  }
  return out;
}

std::vector<Window> take_untraced() {
  std::vector<Window> out;
  std::unique_lock lock(g_mutex, std::try_to_lock);
  if (lock.owns_lock()) out.swap(g_untraced);
  return out;
}

}  // namespace gpuscope::collector::schedule
