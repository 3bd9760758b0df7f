// The ranks of a distributed job (processes with RANK set): each rank loaded
// and summarized on its own (step times, GPU use, where each step's time goes,
// the wait in collectives), then the cross-rank rules (rules/cross_rank.h).
#pragma once

#include <string_view>

#include "analyzer/analysis.h"
#include "analyzer/context.h"

namespace gpuscope::store {
class Reader;
}

namespace gpuscope::analyzer {

// A collective as torch records it on the CPU: c10d ops (`c10d::allreduce_`),
// ProcessGroup work (`gloo:all_reduce`, `nccl:all_reduce`), record_function
// ranges of the same names (docs/rules.md, "Ranks").
bool is_collective_name(std::string_view name);

// analyze()'s first half for one process (options.pid, or the default one):
// its model, steps (extended to the GPU) and events, and the device to analyse.
struct LoadedProcess {
  Model m;
  StepPlan plan;
  int64_t device = -1;
};
void load_process(store::Reader& reader, const Options& options, LoadedProcess& out);

// One rank's summary from its context (device, steps and events loaded).
RankSummary summarize_rank(const Context& c);

// Fills a.ranks for a recording with at least two ranked processes (each other
// rank loaded with `options` and its own pid) and appends the cross-rank
// findings to a.findings. `analysed` is the context of a.summary.pid.
void analyze_ranks(store::Reader& reader, const Options& options, const Context& analysed, Analysis& a);

}  // namespace gpuscope::analyzer
