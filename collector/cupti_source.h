// CUPTI activity tracing: enables the activity kinds, hands CUPTI buffers
// from a fixed pool (the request callback may run on application threads)
// and queues completed buffers for the writer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collector/config.h"
#include "collector/cupti_api.h"

namespace gpuscope::collector::cupti_source {

// Loads CUPTI, takes the subscriber slot and, when `tracing`, enables
// activities. On failure returns false with a one-line reason and leaves the
// process untouched.
bool start(const Config& config, bool tracing, std::string& why);
bool active();
// Active and not torn down by cuptiFinalize: CUPTI may be called (one relaxed load each).
bool live();
// Tracing on and off while the job runs (schedule.cpp): off disables the
// activity kinds and hands over what CUPTI holds; with
// Config::finalize_when_off and `quiescent` (a step boundary on the job's
// thread), outside stream captures and before any CUDA graph was seen, it also
// drains the devices and tears CUPTI down. On enables the
// kinds again. A no-op when already so or before start(). Returns false with
// a reason when tracing could not resume; true with a reason in `why` when
// it resumed without some kinds.
bool set_tracing(bool on, bool quiescent, std::string& why);
// Called before cuptiFinalize, which frees the names (kernels, devices) that
// records handed over still point at: must see them decoded, or return false
// (CUPTI then stays initialized). Without one, teardown goes ahead (tests).
void set_before_teardown(bool (*decode_all)());
// No more teardowns in this process (any thread).
void forbid_teardown();
uint64_t pauses();
uint64_t finalizes();  // cuptiFinalize calls that succeeded
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
