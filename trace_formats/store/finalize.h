// What `gpuscope record` does to a recording once the job has ended
// (docs/internals.md, "Several processes"). The collector writes while the
// job runs and cannot afford these joins on the job's threads; here they run
// once, over the whole file.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "trace_formats/store/place_ops.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// What finalizing found and what the recording holds, for `record`'s closing lines.
struct Finalized {
  int64_t unlinked = 0;  // rows whose correlation id no launch can have, set to 0
  int64_t processes = 0, kernels = 0, memcpys = 0, api_calls = 0, ranges = 0, ops = 0;
  int64_t dropped = 0;  // records the collector dropped (dropped_records)
  PlacedOps placed;     // ops given to steps recorded without them (place_ops.h)
  std::string stopped;  // why the collector stopped recording before the job ended (meta recording_stopped)
};

// Linking ops to API calls (and before it, when ops were recorded in some
// steps only, placing them) is the long step: called every 65,536 calls with
// the calls done and the calls in all, both passes counted.
using LinkProgress = std::function<void(uint64_t done, uint64_t total)>;

// In one transaction: unlinks correlation ids no launch can have, derives one
// graph_launch row per graph launch from its kernels, gives waits the thread
// of the API call that waited, gives steps recorded without ops the ops of a
// matching recorded step (place_ops.h), and links API calls to the innermost
// op open on their thread. Then folds the WAL back into the file, unless a process of
// the job still holds it open. Throws Error naming the file.
Finalized finalize_recording(const std::string& path, const LinkProgress& progress = {});

// Correlation 0 links nothing, here and in the analyzer. Sets it on every row
// of an id no two API calls, and outside a CUDA graph no two kernels, can
// share. Returns the rows changed.
int64_t drop_impossible_links(Connection& db);

}  // namespace gpuscope::store
