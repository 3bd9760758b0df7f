// A recording's traced stretches (range source `sampling_window`) as readers
// should see them. The collector writes a stretch's range when the stretch
// ends, so a job that died inside one (SIGKILL, or a signal it could not see
// through) leaves the last stretch without its range although its steps were
// traced: ops and API calls go on after the last range's end. Readers close
// that stretch at the process's last recorded event, so such a job loses at
// most the writer's last flush interval, not everything after the control
// stretch.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// The stretch process `pid` left open, as (start, end) in recording time:
// from the step in which tracing evidently resumed (the latest step of the
// process starting at or before the first recorded op or API call after the
// last closed stretch, no earlier than that stretch's end) to the process's
// last recorded event. nullopt when the process has no closed stretch (it
// never switched tracing, or died in its first stretch: readers then take
// everything as traced) or nothing traced follows the last one.
std::optional<std::pair<int64_t, int64_t>> open_traced_stretch(Connection& db, int64_t pid);

// Every process's stretches, the open one included, by start; `closed_by_reader`
// counts those that open_traced_stretch supplied.
struct TracedStretches {
  std::vector<std::pair<int64_t, int64_t>> stretches;
  int64_t closed_by_reader = 0;
};
TracedStretches traced_stretches(Connection& db);

}  // namespace gpuscope::store
