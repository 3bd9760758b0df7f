// Distributed jobs in the viewer: the constant shift per rank that lays its
// steps over the reference rank's ("Align steps"), and the words of the rank
// groups' titles that compare the ranks. No Qt, no SQL.
//
// Why one constant per rank: the ranks of a synchronous job leave every
// collective together, so their step boundaries differ by a skew (clocks of
// different hosts, a rank that enters the loop later, work before the step
// mark), not by a drift. A constant keeps every duration and every gap true,
// keeps each lane sorted and non-overlapping (so its level-of-detail pyramid,
// hit tests and highlights work unchanged) and makes a click one subtraction;
// shifting each step on its own would break all of that at step boundaries.
// The constant is the median, over the step numbers both ranks recorded, of
// how much later the reference rank started step k: one odd step (the first,
// after a late start; a stretched one) does not move it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "gui/model/recording_loader.h"
#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

struct RankShift {
  int64_t rank = -1, pid = -1;
  int64_t offset = 0;        // ns added to the process's times
  int64_t shared_steps = 0;  // step numbers it has in common with the reference
  int64_t max_residual = 0;  // largest |reference start - shifted start| over those steps
};

struct StepAlignment {
  int64_t reference_rank = -1, reference_pid = -1;  // the lowest rank with steps
  std::vector<RankShift> shifts;                    // every ranked process with steps, by rank
  int64_t offset(int64_t pid) const;                // 0 for a process without a shift
  const RankShift* find(int64_t pid) const;
};

// Processes with a rank, by rank then pid.
std::vector<const ProcessInfo*> ranked_processes(const std::vector<ProcessInfo>& processes);
// Whether the recording holds a distributed job: at least two ranked processes.
bool is_multi_rank(const std::vector<ProcessInfo>& processes);

StepAlignment align_steps(const std::vector<ProcessInfo>& processes, const std::vector<StepMarker>& steps);

// What a rank group's title adds from the analyzer's summary, the numbers of
// `gpuscope analyze`'s ranks table: "step 20.6 ms median, 28.1 ms p95 · waits
// 14.5 ms/step in collectives · data 5.42 ms/step · compute 0.831 ms/step".
std::string rank_comparison(const RankItem& r);

}  // namespace gpuscope::gui
