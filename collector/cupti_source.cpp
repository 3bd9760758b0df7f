#include "collector/cupti_source.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collector/clock.h"
#include "collector/cupti_buffers.h"
#include "collector/cupti_callback_ids.h"
#include "collector/graph_steps.h"

namespace gpuscope::collector::cupti_source {
namespace {

constexpr int kFinalizeMinDriver = 12060;  // cuptiFinalize is safe with CUDA graphs from 12.6 on

CuptiApi g_api;
std::mutex g_control;  // start(), set_tracing(), flush(), stop(): never on the hot path

// The lifecycle (cupti_source.h, State): changed only by move_to(), under
// g_control (forget_in_child excepted: a forked child has one thread); read
// without the lock where the hot path must (live(), on_callback).
std::atomic<State> g_state{State::kOff};
std::atomic<uint64_t> g_illegal{0};

State now_state() { return g_state.load(std::memory_order_relaxed); }

void move_to(State to) {
  const State from = now_state();
  if (from == to) return;
  if (!transition_allowed(from, to)) g_illegal.fetch_add(1, std::memory_order_relaxed);
  g_state.store(to);
}
CUpti_SubscriberHandle g_subscriber = nullptr;
bool (*g_before_teardown)() = nullptr;  // under g_control
uint64_t CUPTIAPI timestamp() { return now_ns(); }

// Stream captures under way in the process (CUDA graphs being recorded). A
// step can end inside one (torch.cuda.graph around a whole step, optimizer
// included), and cuCtxSynchronize there would invalidate the user's capture,
// so CUPTI is not torn down while this is above zero.
std::atomic<int> g_captures{0};

// Set at the first graph capture or launch. CUPTI then stays initialized while
// untraced: after a teardown the first replay of a graph waited for all queued
// work (one step per stretch on the H200, the host's lead lost at each resume),
// and a graph job makes few calls for CUPTI to slow down. It also narrows the
// captures missed while CUPTI is torn down to a job's first one.
std::atomic<bool> g_graphs_seen{false};

// Set by the writer when a session after a teardown gave repeated correlation
// ids (see RowSink::note_api_correlation): CUPTI is not torn down again.
std::atomic<bool> g_teardown_forbidden{false};

// Context creations under way on any thread (cuCtxCreate*, cuDevicePrimaryCtxRetain,
// watched from subscription on): cuptiFinalize then waits for the next boundary.
std::atomic<int> g_creating_contexts{0};

Config g_config;

// Counts stream captures under way and notes the first graph.
void track_graphs(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* info) {
  const CallbackIds& ids = callback_ids(g_api, domain);
  if (CallbackIds::contains(ids.graph_launch, cbid)) {
    g_graphs_seen.store(true, std::memory_order_relaxed);
    // cudaGraphLaunch's and cuGraphLaunch's parameters both begin with the
    // graph executable; cudaError_t and CUresult both: 0 is success.
    const int* rc = static_cast<const int*>(info->functionReturnValue);
    if (info->functionParams && (!rc || *rc == 0))
      graph_steps::on_launch(g_config, reinterpret_cast<uint64_t>(*static_cast<void* const*>(info->functionParams)),
                             now_ns());
  } else if (CallbackIds::contains(ids.capture_begin, cbid)) {
    // cudaError_t and CUresult both: 0 is success.
    const int* rc = static_cast<const int*>(info->functionReturnValue);
    if (!rc || *rc == 0) {
      g_captures.fetch_add(1, std::memory_order_relaxed);
      g_graphs_seen.store(true, std::memory_order_relaxed);
    }
  } else if (CallbackIds::contains(ids.capture_end, cbid)) {
    // A capture that began while CUPTI was torn down (or before it
    // subscribed) shows up here first: its graph will be replayed too.
    g_graphs_seen.store(true, std::memory_order_relaxed);
    if (g_captures.fetch_sub(1, std::memory_order_relaxed) <= 0) g_captures.store(0, std::memory_order_relaxed);
  }
}

// A teardown waits for the next API exit on any thread (State::kDraining, see
// set_tracing): CUPTI's documented point for cuptiFinalize, where no other
// CUPTI work of that thread is under way.
void teardown_at_api_exit();
// Under g_control: when tracing paused at a step boundary (a job thread; 0
// from the writer thread), when the untraced stretch counts from after the
// last teardown (0: none since the last resume), and the last untraced
// stretch measured between the pause and the drain at the resume
// (take_untraced_span).
uint64_t g_paused_ns = 0;
uint64_t g_drained_ns = 0;
uint64_t g_span_start = 0, g_span_end = 0;

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && CallbackIds::contains(callback_ids(g_api, domain).context_create, cbid)) {
    if (info->callbackSite == CUPTI_API_ENTER) {
      g_creating_contexts.fetch_add(1, std::memory_order_relaxed);
    } else if (g_creating_contexts.fetch_sub(1, std::memory_order_relaxed) <= 0) {
      g_creating_contexts.store(0, std::memory_order_relaxed);  // its entry came before we watched
    }
  }
  if (info->callbackSite != CUPTI_API_EXIT) return;
  track_graphs(domain, cbid, info);
  // After the capture counts: the exit of a capture's begin must not drain.
  if (now_state() == State::kDraining) teardown_at_api_exit();
}

// Asks CUPTI to call on_callback when a stream capture begins or ends, when
// a graph is launched and when a context is created (rare calls).
void watch_captures() {
  if (!g_api.enable_callback) return;
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const CallbackIds& ids = callback_ids(g_api, domain);
    for (uint32_t cbid : ids.capture_begin) g_api.enable_callback(1, g_subscriber, domain, cbid);
    for (uint32_t cbid : ids.capture_end) g_api.enable_callback(1, g_subscriber, domain, cbid);
    for (uint32_t cbid : ids.graph_launch) g_api.enable_callback(1, g_subscriber, domain, cbid);
    for (uint32_t cbid : ids.context_create) g_api.enable_callback(1, g_subscriber, domain, cbid);
  }
}

// GPUSCOPE_CUPTI_ATTRIBUTES, before the buffer callbacks are registered (the
// per-thread buffer attribute must be). The flags among them are one byte.
void set_user_attributes() {
  for (const auto& [attribute, value] : g_config.cupti_attributes) {
    const auto a = static_cast<CUpti_ActivityAttribute>(attribute);
    const bool flag = a == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER ||
                      a == CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED ||
                      a == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER;
    uint8_t byte = value != 0;
    size_t wide = value, size = flag ? sizeof byte : sizeof wide;
    void* where = flag ? static_cast<void*>(&byte) : static_cast<void*>(&wide);
    if (g_api.set_attribute(a, &size, where) != CUPTI_SUCCESS)
      std::fprintf(stderr, "gpuscope: CUPTI did not take activity attribute %u=%llu\n", attribute,
                   static_cast<unsigned long long>(value));
  }
}

// Takes the subscriber slot and sets CUPTI up (buffers, clock, thread ids).
// Also run again when tracing resumes after cuptiFinalize.
bool subscribe_and_configure(std::string& why) {
  CUptiResult rc = g_api.subscribe(&g_subscriber, on_callback, nullptr);
  if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    why = "CUPTI is already in use in this process (nsys, ncu, compute-sanitizer or torch.profiler)";
    return false;
  }
  if (rc != CUPTI_SUCCESS) {
    why = "cuptiSubscribe failed: " + cupti_error(g_api, rc);
    return false;
  }
  // Buffers come zeroed (calloc, then cleared by the writer after decoding):
  // otherwise CUPTI clears each 4 MB buffer on the application's thread.
  uint8_t zeroed = 1;
  size_t zeroed_size = sizeof zeroed;
  g_api.set_attribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroed_size, &zeroed);
  set_user_attributes();
  g_api.register_timestamp_callback(timestamp);
  // OS thread ids (gettid), as every CPU-side source records them, not pthread_self().
  g_api.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  rc = g_api.register_callbacks(buffers::requested, buffers::completed);
  if (rc != CUPTI_SUCCESS) {
    why = "cuptiActivityRegisterCallbacks failed: " + cupti_error(g_api, rc);
    g_api.unsubscribe(g_subscriber);
    return false;
  }
  watch_captures();
  return true;
}

std::vector<CUpti_ActivityKind> g_kinds;
// stop_for_good(): no tracing again, under g_control. A latch beside the state:
// the recording stopped (its disk filled), CUPTI may still be in any state.
bool g_stopped = false;
std::atomic<uint64_t> g_pauses{0};
std::atomic<uint64_t> g_finalizes{0};
std::atomic<uint64_t> g_teardown_failures{0};
std::atomic<uint64_t> g_deferred{0};    // teardowns put off to a later boundary (not safe then, or failed)
std::atomic<uint64_t> g_failed_tries{0};  // drains or decodes that failed (each tried again, up to kTeardownAttempts)
std::atomic<uint64_t> g_discarded{0};   // buffers dropped at a teardown with nobody to decode them
int g_failed_attempts = 0;              // under g_control: failed teardowns since the last pause

// Kinds other than kernels may fail to enable (MEMORY2 on an old driver, say);
// `failed` lists them, so that a resume that loses one is seen.
bool enable_kinds(std::string& why, std::string* failed = nullptr) {
  for (CUpti_ActivityKind k : g_kinds) {
    CUptiResult rc = g_api.activity_enable(k);
    if (rc == CUPTI_SUCCESS) continue;
    if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      why = "cannot enable kernel tracing: " + cupti_error(g_api, rc);
      return false;
    }
    if (failed) *failed += (failed->empty() ? "" : ", ") + std::string("kind ") + std::to_string(k) + ": " + cupti_error(g_api, rc);
  }
  // CUPTI forgets which calls were switched off whenever the API kinds are
  // disabled (and at cuptiFinalize), so every enable switches them off again.
  if (g_config.runtime_api)
    for (uint32_t cbid : callback_ids(g_api, CUPTI_CB_DOMAIN_RUNTIME_API).noisy) g_api.enable_runtime_api(cbid, 0);
  if (g_config.driver_api)
    for (uint32_t cbid : callback_ids(g_api, CUPTI_CB_DOMAIN_DRIVER_API).noisy) g_api.enable_driver_api(cbid, 0);
  return true;
}

// Under g_control, while draining: stops the callbacks on every API exit; the
// capture, graph and context callbacks stay (cuptiEnableDomain(0) switched
// them off too).
void stop_api_callbacks() {
  g_api.enable_domain(0, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  g_api.enable_domain(0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  watch_captures();
}

// Under g_control: no teardown to come (armed or deferred); CUPTI stays subscribed.
void disarm_teardown() {
  const State s = now_state();
  if (s != State::kDraining && s != State::kDeferred) return;
  move_to(State::kSubscribed);
  if (s == State::kDraining) stop_api_callbacks();
}

// Under g_control, draining: the teardown waits for a later step boundary
// (or writer tick), which arms it again; no callback on every call meanwhile.
void defer_teardown() {
  move_to(State::kDeferred);
  stop_api_callbacks();
  g_deferred.fetch_add(1, std::memory_order_relaxed);
}

// Under g_control, from tracing (a pause) or deferred: callbacks on every
// runtime and driver API exit, the next of which tears CUPTI down. False
// (subscribed, nothing left behind) when CUPTI refused them.
bool arm_teardown() {
  move_to(State::kDraining);
  if (g_api.enable_domain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
      g_api.enable_domain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS)
    return true;
  disarm_teardown();  // no callback on every call left behind
  return false;
}

// Under g_control, deferred: armed again, unless a graph or the writer has
// ruled teardowns out since.
void rearm_teardown() {
  if (now_state() != State::kDeferred) return;
  if (g_graphs_seen.load(std::memory_order_relaxed) || g_teardown_forbidden.load(std::memory_order_relaxed)) {
    disarm_teardown();
    return;
  }
  arm_teardown();
}

// Under g_control, in a teardown after the forced flush: what CUPTI handed
// over is decoded (the writer), dropped when nobody decodes now, or not
// wanted (stopped for good: the writer has ended). False: not decoded.
bool hand_over() {
  if (g_stopped) return true;
  if (g_before_teardown) return g_before_teardown();
  uint64_t dropped = 0;
  drain([](uint8_t*, size_t, uint32_t, void* n) { ++*static_cast<uint64_t*>(n); }, &dropped);
  g_discarded.fetch_add(dropped, std::memory_order_relaxed);
  return true;
}

std::mutex g_own_mutex;  // never held while taking g_control
std::vector<OwnOverhead> g_own;

void note_own(const char* name, uint64_t start, uint64_t end) {
  std::lock_guard lock(g_own_mutex);
  if (g_own.size() < 4096) g_own.push_back({name, static_cast<int64_t>(syscall(SYS_gettid)), start, end});
}

// The thread running a teardown: its own CUDA calls (the drain) come back
// through on_callback and must not start another.
thread_local bool t_tearing_down = false;

// At the exit of a CUDA API call on an application thread, while untraced
// with a teardown armed: drains the devices (kernels still queued carry
// CUPTI's instrumentation), hands over and has the writer decode what CUPTI
// holds (cuptiFinalize frees the names records point at), then unsubscribes
// and finalizes. Never waits for the lock: a thread that cannot take it
// leaves the teardown to a later exit. Inside a stream capture it waits too
// (the drain would invalidate the capture).
void teardown_at_api_exit() {
  if (t_tearing_down) return;
  std::unique_lock lock(g_control, std::try_to_lock);
  if (!lock.owns_lock() || now_state() != State::kDraining) return;
  // A capture or replay began since the pause, or the writer found repeated ids.
  if (g_graphs_seen.load(std::memory_order_relaxed) || g_teardown_forbidden.load(std::memory_order_relaxed)) {
    disarm_teardown();
    return;
  }
  // Not safe now: inside a stream capture (the drain would invalidate it), or
  // while a context is being created (cuptiFinalize would race CUPTI's set-up
  // of it). The next step boundary tries again.
  if (g_captures.load(std::memory_order_relaxed) > 0 || g_creating_contexts.load(std::memory_order_relaxed) > 0) {
    defer_teardown();
    return;
  }
  t_tearing_down = true;
  const uint64_t begun = now_ns();
  bool ok = g_api.synchronize_devices();
  const uint64_t drained = now_ns();
  g_drained_ns = 0;
  g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ok = ok && hand_over();
  if (!ok) {
    // CUPTI stays subscribed for now: the next step boundary tries again, up
    // to kTeardownAttempts times after one pause, then it stays until the next.
    g_failed_tries.fetch_add(1, std::memory_order_relaxed);
    if (++g_failed_attempts >= kTeardownAttempts) {
      g_teardown_failures.fetch_add(1, std::memory_order_relaxed);  // given up
      disarm_teardown();
    } else {
      defer_teardown();
    }
  } else {
    g_api.activity_disable(CUPTI_ACTIVITY_KIND_DEVICE);
    g_api.unsubscribe(g_subscriber);
    // A failed cuptiFinalize leaves CUPTI initialized: untraced, as a pause
    // without teardown (a resume enables the kinds without subscribing again).
    const bool finalized = g_api.finalize() == CUPTI_SUCCESS;
    move_to(finalized ? State::kTornDown : State::kSubscribed);
    // The untraced stretch counts from the pause, where the step began: the
    // job's CPU work before its first CUDA call (a DataLoader batch built in
    // the main process, tens of milliseconds) is part of the step. The
    // teardown's own time (drain, flush, decode, finalize: milliseconds, the
    // GPU idle) is gpuscope's, so the start moves later by it. Paused from
    // the writer thread (not at a step boundary), it counts from here.
    if (finalized) {
      const uint64_t done = now_ns();
      g_drained_ns = g_paused_ns && g_paused_ns <= begun ? g_paused_ns + (done - begun) : done;
      g_finalizes.fetch_add(1, std::memory_order_relaxed);
      buffers::next_session();  // every buffer of the old one has completed
    } else {
      // Unsubscribed already: given up, not tried again before the next pause.
      g_teardown_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }
  note_own(kTeardownName, drained, now_ns());
  t_tearing_down = false;
}

// Under g_control, while tracing: switches the activities off and arms the
// teardown that removes CUPTI's remaining per-launch cost.
void pause_locked(bool may_wait) {
  g_paused_ns = may_wait ? now_ns() : 0;
  g_failed_attempts = 0;
  for (CUpti_ActivityKind k : g_kinds)
    if (k != CUPTI_ACTIVITY_KIND_DEVICE) g_api.activity_disable(k);
  // CUPTI keeps instrumenting launches after its activities are disabled;
  // cuptiFinalize removes that cost (Kineto's teardown does the same). It
  // runs at the next API exit (teardown_at_api_exit; at_step_boundary makes
  // that exit come at once), never once a graph was seen (see g_graphs_seen)
  // or on a driver where it crashed with them.
  const bool teardown = g_config.finalize_when_off && g_api.finalize && g_api.enable_domain &&
                        !g_graphs_seen.load(std::memory_order_relaxed) &&
                        !g_teardown_forbidden.load(std::memory_order_relaxed) && g_api.driver_version &&
                        g_api.driver_version() >= kFinalizeMinDriver && g_api.synchronize_devices;
  if (teardown) {
    arm_teardown();
  } else {
    move_to(State::kSubscribed);
  }
  if (now_state() != State::kDraining) g_api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_pauses.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void wait_dormant() {
  std::lock_guard lock(g_control);
  if (now_state() == State::kOff) move_to(State::kDormant);
}

bool start(const Config& config, bool tracing, std::string& why) {
  std::lock_guard lock(g_control);
  if (active()) return true;
  if (!load_cupti(g_api, why)) return false;
  g_config = config;
  buffers::allocate();
  if (!subscribe_and_configure(why)) return false;
  g_kinds = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
             CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
             // cudaEventRecord's stream and correlation, for the stream waits on it.
             CUPTI_ACTIVITY_KIND_CUDA_EVENT};
  if (config.runtime_api) g_kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (config.driver_api) g_kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  if (config.memory) g_kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
  if (config.torch) g_kinds.push_back(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  if (config.overhead) g_kinds.push_back(CUPTI_ACTIVITY_KIND_OVERHEAD);
  if (tracing && !enable_kinds(why)) return false;
  // Device records come once, when a context is created: CUDA starting in an
  // untraced stretch (--delay, --sample) left a recording without its device
  // properties on the H200. The kind stays on until a teardown.
  if (!tracing) g_api.activity_enable(CUPTI_ACTIVITY_KIND_DEVICE);
  move_to(tracing ? State::kTracing : State::kSubscribed);
  return true;
}

void forbid_teardown() { g_teardown_forbidden.store(true, std::memory_order_relaxed); }

void set_before_teardown(bool (*decode_all)()) {
  std::lock_guard lock(g_control);
  g_before_teardown = decode_all;
}

uint64_t pauses() { return g_pauses.load(std::memory_order_relaxed); }
uint64_t finalizes() { return g_finalizes.load(std::memory_order_relaxed); }
uint64_t teardown_failures() { return g_teardown_failures.load(std::memory_order_relaxed); }
uint64_t teardown_attempts_failed() { return g_failed_tries.load(std::memory_order_relaxed); }

std::vector<Stat> lifecycle_stats() {
  return {{"tracing_pauses", pauses()},
          {"cupti_finalizes", finalizes()},
          {"cupti_teardown_failures", teardown_failures()},
          {"cupti_teardowns_deferred", g_deferred.load(std::memory_order_relaxed)},
          {"cupti_teardown_attempts_failed", teardown_attempts_failed()},
          {"cupti_buffers_discarded", g_discarded.load(std::memory_order_relaxed)},
          {"cupti_kept_for_graphs", kept_for_graphs() ? 1u : 0u},
          {"cupti_teardown_forbidden", g_teardown_forbidden.load(std::memory_order_relaxed) ? 1u : 0u},
          {"cupti_state", static_cast<uint64_t>(now_state())}};
}
bool kept_for_graphs() { return g_graphs_seen.load(std::memory_order_relaxed) && g_config.finalize_when_off; }

Switched set_tracing(bool on, bool may_wait, std::string& why) {
  std::unique_lock lock(g_control, std::defer_lock);
  if (may_wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return Switched::busy;
  }
  const State was = now_state();
  // Off again while a teardown waits (a writer tick, a step boundary): armed again.
  if (!on && was == State::kDeferred) {
    rearm_teardown();
    return Switched::yes;
  }
  if (!active() || was == State::kStopped || on == (was == State::kTracing) || (on && g_stopped))
    return Switched::yes;
  if (!on) {
    pause_locked(may_wait);
    return Switched::yes;
  }
  disarm_teardown();  // resumed before any API exit came
  uint64_t from = now_ns();
  if (now_state() == State::kTornDown) {
    // The stretch ran untraced from the pause; draining again here
    // (a job thread at a step boundary: may_wait) measures how long the GPU
    // took for the untraced steps, which the CPU's step ends alone do not
    // show when the CPU runs ahead of the GPU.
    if (may_wait && g_drained_ns && g_api.synchronize_devices()) {
      g_span_start = g_drained_ns;
      g_span_end = now_ns();
    }
    g_drained_ns = 0;
    from = now_ns();
    if (!subscribe_and_configure(why)) return Switched::no;
    move_to(State::kSubscribed);
    const uint64_t subscribed = now_ns();
    note_own(kSubscribeName, from, subscribed);
    from = subscribed;
  }
  std::string failed;
  if (!enable_kinds(why, &failed)) return Switched::no;
  if (!failed.empty()) why = "some activity kinds did not resume: " + failed;
  move_to(State::kTracing);
  note_own(kEnableName, from, now_ns());
  return Switched::yes;
}

void restart_untraced_span() {
  std::lock_guard lock(g_control);
  if (now_state() != State::kTornDown || !g_drained_ns) return;
  if (g_api.synchronize_devices && !g_api.synchronize_devices()) {
    g_drained_ns = 0;  // not drained: no span measured for this stretch
    return;
  }
  g_drained_ns = now_ns();
}

bool take_untraced_span(uint64_t& start, uint64_t& end) {
  std::lock_guard lock(g_control);
  if (!g_span_end) return false;
  start = g_span_start;
  end = g_span_end;
  g_span_start = g_span_end = 0;
  return true;
}

std::vector<OwnOverhead> take_own_overhead() {
  std::lock_guard lock(g_own_mutex);
  return std::exchange(g_own, {});
}

bool teardown_pending() { return now_state() == State::kDraining; }

void tear_down_here() {
  if (now_state() == State::kDraining && g_api.call_api_here) g_api.call_api_here();
}

void at_step_boundary() {
  const State s = now_state();
  if (s != State::kDraining && s != State::kDeferred) return;
  // Deferred, or a graph seen since the pause (a graph's launch may be what
  // ended this step, graph_steps.h, inside CUPTI's callback): no call of our own.
  if (s == State::kDeferred || g_graphs_seen.load(std::memory_order_relaxed)) {
    std::unique_lock lock(g_control, std::try_to_lock);
    if (!lock.owns_lock()) return;  // a switch under way; the next boundary
    if (g_graphs_seen.load(std::memory_order_relaxed)) {
      disarm_teardown();
      return;
    }
    rearm_teardown();
  }
  tear_down_here();
}

bool stop_for_good() {
  std::unique_lock lock(g_control, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  g_stopped = true;
  if (now_state() != State::kTracing) return true;
  // No decode is waited for here (the writer thread calls this and decodes
  // what CUPTI hands over when the teardown asks: serve_decode_request).
  pause_locked(false);
  return true;
}

void forget_in_child() {
  const State s = now_state();  // no lock: the child has one thread
  if (s == State::kDraining || s == State::kDeferred) move_to(State::kSubscribed);
}

bool active() {
  const State s = now_state();
  return s != State::kOff && s != State::kDormant;
}
bool live() { return active() && now_state() != State::kTornDown; }
State state() { return now_state(); }
uint64_t illegal_transitions() { return g_illegal.load(std::memory_order_relaxed); }

const CuptiApi& api() { return g_api; }

void flush(bool forced) {
  // Never beside a switch: a flush racing cuptiFinalize or a fresh subscription
  // is what crashed Kineto (its teardown commit), and while a switch waits for
  // the writer to decode, the writer's periodic flush must not wait for it.
  std::unique_lock lock(g_control, std::defer_lock);
  if (forced) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return;
  }
  if (live()) g_api.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}


void stop() {
  std::lock_guard lock(g_control);
  if (!live() || now_state() == State::kStopped) return;
  disarm_teardown();  // the writer is stopping: nobody would decode before a teardown
  for (CUpti_ActivityKind k : g_kinds) g_api.activity_disable(k);
  move_to(State::kStopped);
}

}  // namespace gpuscope::collector::cupti_source
