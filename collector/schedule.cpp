#include "collector/schedule.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "collector/clock.h"
#include "collector/cupti_source.h"
#include "collector/emit.h"
#include "trace_formats/schema/enums.h"

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
void (*g_cupti_starter)() = nullptr;
// The control stretch (Config::control), under g_mutex: steps ended so far, and
// the stretch's state, start and untraced steps ended in it.
enum class Control { kBefore, kIn, kDone };
Control g_control = Control::kBefore;
uint64_t g_steps_ended = 0, g_control_start_ns = 0, g_control_steps = 0;
// The stretch starts once step times have settled (compilation, cuDNN's
// autotuning and a DataLoader's first batches make the first steps slow): after
// the warm-up steps, at the first boundary where the last kSettledSteps steps
// agree within kSettledSpread, and at the latest kMaxSettleSteps steps later.
constexpr size_t kSettledSteps = 2;
constexpr double kSettledSpread = 1.25;
constexpr uint64_t kMaxSettleSteps = 50;
uint64_t g_recent[kSettledSteps] = {};  // the last steps' durations, ns (0: unknown)
uint64_t g_recent_n = 0;

// Captures on demand (schedule.h), under g_mutex except the phase's loads.
std::atomic<Phase> g_phase{Phase::idle};
CapturePlan g_plan;
uint64_t g_traced_first = 1, g_traced_last = 0, g_traced_start_ns = 0;
std::atomic<uint64_t> g_capture_start_ns{0};
Rule g_rule;
uint64_t g_rule_since_ns = 0, g_last_fire_ns = 0;
std::string g_fired;
void (*g_attention)() = nullptr;
// Durations of the last idle steps, for the slow-step rule's median.
constexpr size_t kHistory = 64, kMinHistory = 8;
uint64_t g_durations[kHistory] = {};
size_t g_durations_n = 0;

// Holds g_mutex. `may_wait`: false on the writer thread, which must not wait
// for a teardown under way on a job thread (it waits for the writer to
// decode): the switch is then left to the next tick. `entered`: the clock when
// the caller, given `now`, began (see the stretch's end below).
void switch_to(bool on, bool may_wait, uint64_t now, uint64_t entered) {
  if (on == g_traced.load(std::memory_order_relaxed)) return;
  if (on && g_cupti_starter) g_cupti_starter();
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
  if (config.on_demand) {
    if (!g_epoch_ns) {
      g_epoch_ns = now;
      g_traced.store(false, std::memory_order_relaxed);
    }
    return g_phase.load(std::memory_order_relaxed) == Phase::traced;
  }
  // The next step is numbered g_steps_ended (from 0).
  if (!g_epoch_ns) {  // the first call: traced from here unless a window starts later
    g_epoch_ns = now;
    const bool on = config.traced_at(now, now) && config.step_in_window(g_steps_ended);
    g_traced.store(on, std::memory_order_relaxed);
    g_open_start = on ? now : 0;
  }
  return config.traced_at(now, g_epoch_ns) && g_control != Control::kIn && config.step_in_window(g_steps_ended);
}

// Holds g_mutex. Whether the last steps' durations agree (see kSettledSteps).
bool settled() {
  if (g_recent_n < kSettledSteps) return false;
  const auto [lo, hi] = std::minmax_element(std::begin(g_recent), std::end(g_recent));
  return *lo > 0 && static_cast<double>(*hi) <= kSettledSpread * static_cast<double>(*lo);
}

// Holds g_mutex. Advances the control stretch at the end of a step (counted by
// the caller) that lasted `step_ns` (0: unknown, the first one).
void count_control_step(const Config& config, uint64_t now, uint64_t step_ns) {
  if (step_ns > 0) g_recent[g_recent_n++ % kSettledSteps] = step_ns;
  if (g_control == Control::kBefore && g_steps_ended >= config.control_warmup_steps &&
      (settled() || g_steps_ended >= config.control_warmup_steps + kMaxSettleSteps)) {
    g_control = Control::kIn;
    g_control_start_ns = now;
    g_control_steps = 0;
  } else if (g_control == Control::kIn && ++g_control_steps >= config.control_steps &&
             now - g_control_start_ns >= config.control_min_ms * 1000000ull) {
    g_control = Control::kDone;
  }
}

void attention() {
  if (g_attention) g_attention();
}

void enter_traced(uint64_t now) {
  g_phase.store(Phase::traced, std::memory_order_relaxed);
  g_traced_first = g_steps_ended;
  g_traced_start_ns = now;
}

// Holds g_mutex: recording stops with tracing (switched off by the caller).
void enter_done() {
  g_phase.store(Phase::done, std::memory_order_relaxed);
  g_traced_last = g_steps_ended > 0 ? g_steps_ended - 1 : 0;
  g_enabled.store(false, std::memory_order_relaxed);
  attention();
}

uint64_t median_duration() {
  uint64_t copy[kHistory];
  const size_t n = std::min(g_durations_n, kHistory);
  std::copy(g_durations, g_durations + n, copy);
  std::nth_element(copy, copy + n / 2, copy + n);
  return copy[n / 2];
}

// Holds g_mutex. An idle job's step of `duration` ns (0: unknown) ended at `now`.
void check_rule(uint64_t now, uint64_t duration) {
  const bool cooled = !g_last_fire_ns || now - g_last_fire_ns >= g_rule.cooldown_ns;
  if (g_rule.slow_factor > 0 && duration && g_durations_n >= kMinHistory && cooled) {
    const uint64_t median = median_duration();
    if (static_cast<double>(duration) > g_rule.slow_factor * static_cast<double>(median)) {
      char why[160];
      std::snprintf(why, sizeof why, "slow-step: step %llu took %.1f ms, %.1fx the median %.1f ms of the last %zu",
                    static_cast<unsigned long long>(g_steps_ended - 1), duration / 1e6,
                    static_cast<double>(duration) / static_cast<double>(median), median / 1e6,
                    std::min(g_durations_n, kHistory));
      g_fired = why;
    }
  }
  if (g_fired.empty() && g_rule.every_ns && cooled && now - std::max(g_rule_since_ns, g_last_fire_ns) >= g_rule.every_ns)
    g_fired = "every: " + std::to_string(g_rule.every_ns / 1000000000ull) + " s since the last capture";
  if (!g_fired.empty()) {
    g_last_fire_ns = now;
    g_plan = g_rule.plan;
    g_plan.start_step = 0;
    g_traced_first = 1;
    g_traced_last = 0;
    g_phase.store(Phase::waiting, std::memory_order_relaxed);
    attention();
  }
}

// Holds g_mutex: a capture's phases at the end of a step (counted by the caller).
void capture_step(uint64_t now, uint64_t duration) {
  switch (g_phase.load(std::memory_order_relaxed)) {
    case Phase::idle:
      if (g_rule.slow_factor > 0 || g_rule.every_ns) check_rule(now, duration);
      // The median is of dormant steps only, kept whether a rule is armed or not.
      if (duration) g_durations[g_durations_n++ % kHistory] = duration;
      if (g_phase.load(std::memory_order_relaxed) != Phase::waiting) break;
      [[fallthrough]];  // a rule fired: its capture begins at this boundary
    case Phase::waiting:
      if (g_steps_ended < g_plan.start_step) break;
      // The control stretch's GPU work is measured from here (a drain), not
      // from the teardown that ended the previous capture.
      cupti_source::restart_untraced_span();
      g_enabled.store(true, std::memory_order_release);
      g_phase.store(Phase::control, std::memory_order_relaxed);
      g_capture_start_ns = now;
      g_control_start_ns = now;
      g_control_steps = 0;
      if (g_plan.control_steps == 0 && g_plan.control_min_ns == 0) enter_traced(now);
      break;
    case Phase::control:
      if (++g_control_steps >= g_plan.control_steps && now - g_control_start_ns >= g_plan.control_min_ns)
        enter_traced(now);
      break;
    case Phase::traced:
      if ((g_plan.steps && g_steps_ended - g_traced_first >= g_plan.steps) ||
          (g_plan.seconds_ns && now - g_traced_start_ns >= g_plan.seconds_ns))
        enter_done();
      break;
    case Phase::done:
      break;
  }
}

// Holds g_mutex; the writer thread, without steps from a plugin: a capture
// runs by time, traced from its first tick, no control stretch.
void capture_tick(uint64_t now, uint64_t entered) {
  const Phase phase = g_phase.load(std::memory_order_relaxed);
  if (phase == Phase::waiting) {
    g_enabled.store(true, std::memory_order_release);
    g_capture_start_ns = now;
    enter_traced(now);
    switch_to(true, false, now, entered);
  } else if (phase == Phase::traced && g_plan.seconds_ns && now - g_traced_start_ns >= g_plan.seconds_ns) {
    switch_to(false, false, now, entered);
    if (!g_traced.load(std::memory_order_relaxed)) enter_done();
  }
}

}  // namespace

bool capture_begin(const CapturePlan& plan, std::string& why) {
  std::lock_guard lock(g_mutex);
  if (g_phase.load(std::memory_order_relaxed) != Phase::idle) {
    why = "a capture is already under way in this process";
    return false;
  }
  if (plan.start_step && plan.start_step < g_steps_ended) {
    why = "step " + std::to_string(plan.start_step) + " has passed (the job is at step " +
          std::to_string(g_steps_ended) + ")";
    return false;
  }
  g_plan = plan;
  g_traced_first = 1;
  g_traced_last = 0;
  g_capture_start_ns = 0;
  g_phase.store(Phase::waiting, std::memory_order_relaxed);
  return true;
}

uint64_t capture_start_ns() { return g_capture_start_ns.load(); }

void capture_end_now(uint64_t now) {
  std::lock_guard lock(g_mutex);
  const Phase phase = g_phase.load(std::memory_order_relaxed);
  if (phase == Phase::idle || phase == Phase::done) return;
  if (phase == Phase::traced) switch_to(false, true, now, now);
  if (phase != Phase::traced) g_traced_first = g_steps_ended + 1;  // none traced
  enter_done();
}

void capture_reset() {
  std::lock_guard lock(g_mutex);
  g_capture_start_ns = 0;
  g_enabled.store(false, std::memory_order_relaxed);
  g_phase.store(Phase::idle, std::memory_order_relaxed);
}

Phase capture_phase() { return g_phase.load(std::memory_order_relaxed); }

uint64_t steps_ended() {
  std::lock_guard lock(g_mutex);
  return g_steps_ended;
}

uint64_t median_step_ns() {
  std::lock_guard lock(g_mutex);
  return g_durations_n >= kMinHistory ? median_duration() : 0;
}

void captured_steps(uint64_t& first, uint64_t& last) {
  std::lock_guard lock(g_mutex);
  first = g_traced_first;
  last = g_traced_last;
}

void set_rule(const Rule& rule, uint64_t now) {
  std::lock_guard lock(g_mutex);
  g_rule = rule;
  g_rule_since_ns = now;
  g_last_fire_ns = 0;
  g_fired.clear();
}

std::string take_rule_fired() {
  std::lock_guard lock(g_mutex);
  std::string out;
  out.swap(g_fired);
  return out;
}

void set_cupti_starter(void (*start)()) {
  std::lock_guard lock(g_mutex);
  g_cupti_starter = start;
}

void set_attention_hook(void (*hook)()) {
  std::lock_guard lock(g_mutex);
  g_attention = hook;
}

bool scheduled(const Config& config) { return config.switches(); }

void begin(const Config& config, uint64_t now) {
  if (!scheduled(config)) return;
  std::lock_guard lock(g_mutex);
  wanted(config, now);
}

bool on_step_boundary(const Config& config, uint64_t now) {
  if (!scheduled(config)) return true;
  const uint64_t entered = now_ns();
  const uint64_t previous = g_last_step_ns.exchange(now, std::memory_order_relaxed);
  bool traced_next = false;
  {
    std::lock_guard lock(g_mutex);
    ++g_steps_ended;
    if (config.control()) count_control_step(config, now, previous && now > previous ? now - previous : 0);
    if (config.on_demand) capture_step(now, previous && now > previous ? now - previous : 0);
    switch_to(wanted(config, now), true, now, entered);
    traced_next = g_traced.load(std::memory_order_relaxed);
  }
  // Untraced from here: a teardown armed by this switch (or deferred at an
  // earlier boundary) happens now, on the job's thread, with no kernel of the
  // traced steps left queued (it drains the devices first) and before the
  // capture's writer stops (ondemand.cpp waits for it). The schedule's lock is
  // free meanwhile: the writer's tick, which decodes for the teardown, never waits.
  if (!traced_next) cupti_source::at_step_boundary();
  return traced_next;
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
  if (config.on_demand) {
    if (!g_expect_steps.load(std::memory_order_relaxed)) capture_tick(now, entered);
    return;
  }
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
