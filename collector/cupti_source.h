// CUPTI activity tracing: enables the activity kinds, hands CUPTI buffers
// from a fixed pool (the request callback may run on application threads)
// and queues completed buffers for the writer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/config.h"
#include "collector/cupti_api.h"

namespace gpuscope::collector::cupti_source {

// CUPTI's lifecycle in this process, one state changed by one transition
// function (cupti_source.cpp, move_to) and checked against transition_allowed:
//   off --wait_dormant--> dormant (record --on-demand: CUPTI not loaded until
//                  the first capture); dormant --start--> subscribed or tracing
//   off --start--> subscribed (untraced: a sampled, windowed or on-demand
//                  recording's dormant start; device records only)
//   off --start--> tracing
//   tracing --pause--> subscribed, or draining (a teardown armed: callbacks on
//                  every API exit; at_step_boundary makes one CUDA call of its
//                  own so that the exit comes at once, on the job's thread)
//   draining --API exit--> torn down (drained, decoded, unsubscribed,
//                  cuptiFinalize: CUPTI costs the job nothing)
//   draining --API exit, not safe now (a stream capture, a context being
//                  created) or the drain or decode failed--> deferred (callbacks
//                  off again); deferred --next step boundary or writer tick--> draining
//   draining, deferred --resume / graph seen / failed kTeardownAttempts times--> subscribed
//   subscribed --resume--> tracing;  torn down --resume--> subscribed --> tracing
//   subscribed, tracing --stop() at exit--> stopped (kinds off; flush and drain only)
// stop_for_good (the disk filled) is a latch beside it: no resume from then on.
enum class State : uint8_t { kOff, kDormant, kSubscribed, kTracing, kDraining, kTornDown, kDeferred, kStopped };
State state();
const char* state_name(State s);
bool transition_allowed(State from, State to);
// Transitions made that transition_allowed refuses (tests: stays 0).
uint64_t illegal_transitions();

// An on-demand recording: CUPTI stays unloaded until a capture calls start().
// Off to dormant; a no-op in any other state.
void wait_dormant();
// Loads CUPTI, takes the subscriber slot and, when `tracing`, enables
// activities. On failure returns false with a one-line reason and leaves the
// process untouched.
bool start(const Config& config, bool tracing, std::string& why);
// Started (not off, not dormant).
bool active();
// Active and not torn down by cuptiFinalize: CUPTI may be called (one relaxed load each).
bool live();
// Tracing on and off while the job runs (schedule.cpp): off disables the
// activity kinds; with Config::finalize_when_off and before any CUDA graph was
// seen, it also arms a teardown that the next CUDA API exit on any thread
// carries out (drain the devices, hand over and decode, cuptiFinalize: CUPTI's
// documented point for it), otherwise it hands over what CUPTI holds at once.
// On disarms a pending teardown, subscribes again after one and enables the
// kinds. A no-op when already so or before start().
// `may_wait` false (the writer thread): returns busy instead of waiting for a
// teardown under way, which may itself wait for the writer to decode.
// no: tracing could not resume (reason in `why`); yes with a reason in `why`:
// it resumed without some kinds.
enum class Switched { yes, no, busy };
Switched set_tracing(bool on, bool may_wait, std::string& why);
// A teardown is armed and waits for an API exit.
bool teardown_pending();
// At a step boundary, on the job's thread, untraced (schedule.cpp, outside its
// lock): a teardown armed now happens now (tear_down_here), and one deferred
// is armed again first. One relaxed load when there is nothing to do.
void at_step_boundary();
// A teardown armed: makes one CUDA driver call on this thread so that it
// happens at that call's exit (CuptiApi::call_api_here). Never from the writer
// thread (the teardown waits for the writer to decode). Nothing otherwise.
void tear_down_here();
// Failed drains or decodes after one pause before CUPTI is left subscribed.
inline constexpr int kTeardownAttempts = 3;
// The recording stopped for good (its disk is nearly full): the activity kinds
// off, and set_tracing(true) does nothing from now on. Never waits for the
// lock (the writer thread calls it): false when a switch held it; call again.
bool stop_for_good();

// The last untraced stretch measured on the GPU, once: from the drain when
// CUPTI was torn down to the drain when tracing resumed (collector clock).
// False when none was measured since the last call.
bool take_untraced_span(uint64_t& start, uint64_t& end);
// Captures on demand: the untraced stretch of the next resume counts from
// here, not from the last teardown (the end of the previous capture): a drain
// now, on a job thread at the step boundary where a capture's control stretch
// begins. Nothing while CUPTI is not torn down (or never started).
void restart_untraced_span();
// gpuscope's own stall of the job where tracing switches: CPU time on the
// thread that switched, with the GPU drained and nothing to run. The teardown
// from the end of its drain (flush, decode, cuptiFinalize), the resume from
// the end of its drain (cuptiSubscribe and its set-up), then enabling the
// kinds (the only part without a teardown before). The writer stores them as
// tracer_overhead ranges on that thread.
struct OwnOverhead {
  const char* name;  // one of the k*Name below
  int64_t tid;
  uint64_t start, end;  // collector clock
};
inline constexpr const char* kTeardownName = "gpuscope: CUPTI teardown (flush, decode, cuptiFinalize)";
inline constexpr const char* kSubscribeName = "gpuscope: CUPTI resume, cuptiSubscribe";  // after a teardown only
inline constexpr const char* kEnableName = "gpuscope: CUPTI resume, enable activities";
// Those since the last call, oldest first.
std::vector<OwnOverhead> take_own_overhead();
// In a forked child: no teardown from there (the parent owns CUPTI's state).
void forget_in_child();
// Called before cuptiFinalize, which frees the names (kernels, devices) that
// records handed over still point at: must see them decoded, or return false
// (the teardown is deferred to the next step boundary). Null: nobody decodes
// now (no writer: a capture's file is closed); what CUPTI handed over is
// dropped before cuptiFinalize, counted as cupti_buffers_discarded.
void set_before_teardown(bool (*decode_all)());
// No more teardowns in this process (any thread).
void forbid_teardown();
uint64_t pauses();
uint64_t finalizes();  // cuptiFinalize calls that succeeded
// Teardowns given up: the drain or the writer's decode failed kTeardownAttempts
// times after one pause (or cuptiFinalize failed), so CUPTI stays subscribed
// and untraced steps keep paying its launch cost until the next pause.
uint64_t teardown_failures();
// Each drain or decode that failed, tried again at the next step boundary.
uint64_t teardown_attempts_failed();
// What the recording's collector_stat says of the lifecycle (tracing_pauses,
// cupti_finalizes, cupti_teardown_failures (given up), cupti_teardowns_deferred,
// cupti_teardown_attempts_failed, cupti_buffers_discarded, cupti_kept_for_graphs,
// cupti_teardown_forbidden, and cupti_state: the State as a number, so the
// last tick of a capture's file says whether CUPTI was torn down: 5).
struct Stat {
  const char* key;
  uint64_t value;
};
std::vector<Stat> lifecycle_stats();
// Teardown was wanted, but the job uses CUDA graphs, so CUPTI stays initialized.
bool kept_for_graphs();
const CuptiApi& api();

// Asks CUPTI to hand over filled buffers (forced: also partly filled ones).
void flush(bool forced);
// Calls fn(buffer, valid_bytes, session) for every completed buffer, in the
// order they completed, then recycles it. `session` counts cuptiFinalize calls
// before the buffer was filled (RowSink::begin_cupti_session).
void drain(void (*fn)(uint8_t* buffer, size_t valid, uint32_t session, void* ctx), void* ctx);
// Records CUPTI dropped (buffers full) and buffers the pool could not supply.
uint64_t dropped_records();
uint64_t pool_exhausted();
uint64_t buffers_used();
// Disables activities; call flush(true) and drain afterwards.
void stop();

}  // namespace gpuscope::collector::cupti_source
