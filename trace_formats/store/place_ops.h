// Ops recorded in some steps only (GPUSCOPE_TORCH_OP_STEPS, `gpuscope record`'s
// default): a steady-state training step repeats the step before it, op for
// op and launch for launch. So a step whose ops were not recorded is given
// the ops of a recorded step whose GPU-facing API calls, thread by thread,
// are the same calls in the same order (or hold them, with other calls before
// or after: a probe between blocks of steps, a copy for logging every N
// steps); each copied op's start and end are moved to the matching point
// between the same calls of the new step. The
// usual link by thread and time (finalize.h) then gives the new step's calls,
// and so its kernels, their ops. A step whose calls match no recorded step
// keeps no ops, and is counted.
#pragma once

#include <cstdint>
#include <functional>

#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// Ops placed by position have external_id >= this (docs/schema.md, `op`).
constexpr int64_t kPlacedOpIdBase = int64_t{1} << 62;

struct PlacedOps {
  int64_t steps_placed = 0;    // steps given ops, on every thread that made GPU calls
  int64_t steps_unplaced = 0;  // steps with GPU calls on a thread no recorded step matched
  int64_t ops = 0;             // op rows added
  // Of steps_placed: those whose calls held a recorded step's with others
  // around them (the other calls' kernels get no op).
  int64_t steps_with_extra_calls = 0;
};

// Called every 65,536 API calls with the calls scanned and the calls in all.
using PlaceProgress = std::function<void(uint64_t done, uint64_t total)>;

// Whether the recording says ops were recorded in some steps only (meta
// torch_op_steps other than 0), i.e. whether place_ops_by_position has work.
bool ops_in_some_steps(Connection& db);

// Adds the op rows, and meta `ops_placed`, `ops_placed_steps`,
// `ops_unplaced_steps` and `ops_placed_steps_with_extra_calls` when there was
// something to place. Runs inside the
// caller's transaction, before ops are linked to calls.
PlacedOps place_ops_by_position(Connection& db, const PlaceProgress& progress = {});

// The API calls that take part in matching: those that carry GPU work
// (launches, copies, memsets, a stream waiting on an event). Allocator and
// set-up calls come and go between steps, and so do the syncs and event
// records of a script's own timing code: they would make equal steps differ.
bool is_step_matching_call(std::string_view name);

}  // namespace gpuscope::store
