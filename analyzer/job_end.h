// How the recorded job ended (Summary::job, meta `job_exit`), said in the
// report's first lines: a job that failed or was stopped is not mistaken for
// a clean run, and one that failed before completing a step has its findings
// marked as describing its start-up only. The text and Markdown reports say it
// in their second line, JSON in `summary.job_exit`.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/result.h"

namespace gpuscope::analyzer {

// Whether the job failed or was stopped before completing a step: its findings describe start-up only.
bool startup_only(const Summary& s);

// A job that ended before its first step: its findings describe start-up
// (imports, model build, the first launches), not the training step, so none
// is ranked above low severity, whatever its saving.
void cap_startup_findings(Analysis& a);

// "job              FAILED: exit code 1 after 1.020 s, 0 steps completed; ..."
// without the label; empty when the recording does not say how the job ended.
std::string job_end_line(const Summary& s);

// "job FAILED: exit code 1 after 0.512 s, 0 steps completed; " for a job that
// failed or was stopped, else "": the start of an error that finds nothing to
// analyse (a job that died before its first timed event), so that it says why.
std::string unclean_job_prefix(const std::optional<store::JobEnd>& job);

}  // namespace gpuscope::analyzer
