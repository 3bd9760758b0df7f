// The ranks of a distributed job (processes with RANK set): each rank loaded
// and summarized on its own (step times, GPU use, where each step's time goes,
// the wait in collectives), then the cross-rank rules (rules/cross_rank.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/context.h"
#include "analyzer/model.h"

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

// One recording's share of a distributed job's cross-rank report, for
// `gpuscope cluster`: every ranked process summarized as analyze_ranks does
// it (options.pid, rank and device do not apply), with the step time its
// findings' savings would be a share of, and how analyze picks its process.
struct RankPass {
  struct Process {
    RankSummary summary;          // rank, host and pid always set; no steps when it has nothing to analyse
    double step_ms_mean = 0;      // Summary::step_ms_mean, were it the analysed process
    double untraced_step_ms = 0;  // Summary::untraced_step_ms, 0 unknown
    std::string error;            // why it has nothing to analyse
  };
  std::vector<Process> ranks;  // by rank, then pid
  PidChoice choice;            // the process analyze details by default
  Process chosen;              // that process when it has no rank (summary.rank -1)
};
RankPass rank_pass(store::Reader& reader, const Options& options);

// The cross-rank part of analyze's report (a.ranks, the cross-rank findings,
// judged and ranked as analyze does, notes on ranks with nothing to analyse)
// from the passes of a job's recordings, given in the order `gpuscope merge`
// takes them: analyze of the merged file gives the same. Which process the
// merged file's analyze would detail is found from the passes' choices; it is
// marked analysed, and a.summary holds its pid and step times. Throws Error
// with fewer than two ranks, or when that process has nothing to analyse.
Analysis cross_rank_report(const std::vector<RankPass>& passes);

}  // namespace gpuscope::analyzer
