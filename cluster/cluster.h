// `gpuscope cluster`: the recordings of a distributed job, one or more ranks
// each, analysed as Dask distributed tasks. The per-rank pass runs on the
// workers (`gpuscope cluster --summarize FILE`, one task per file, through the
// Python driver gpuscope_cluster.py); the reduce builds the cross-rank report
// from the summaries alone (analyzer::cross_rank_report). Public API of gs_cluster.
#pragma once

#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "cluster/summary.h"

namespace gpuscope::cluster {

struct Options {
  std::string scheduler;  // a Dask scheduler's address; empty: a local cluster
  int workers = 0;        // local cluster workers; 0: one per core, at most one per file
  std::string steps;      // --steps, passed to every per-rank pass
  bool progress = false;  // a progress line from the driver on a terminal
};

// Opens every recording here (those not readable here are left to the
// workers) and refuses, in one line naming the file, what is not a recording
// and files of different jobs, before any worker starts.
void check_recordings(const std::vector<std::string>& paths);

// Runs the per-rank pass of every recording on Dask; the summaries come back
// in the order of `paths`. Throws Error with the driver's or a task's reason.
std::vector<FileSummary> summarize_on_dask(const std::vector<std::string>& paths, const Options& options);

// The cross-rank report from summaries, in the order `gpuscope merge` would
// take the files: the files checked to be one job (merge::check_same_job),
// then analyzer::cross_rank_report. a.summary.recording names the files.
analyzer::Analysis reduce(const std::vector<FileSummary>& summaries);

// Where the driver is: GPUSCOPE_CLUSTER_DRIVER, next to this gpuscope, in
// ../share/gpuscope, or in the source tree it was built from.
std::string find_driver();

}  // namespace gpuscope::cluster
