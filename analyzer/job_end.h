// How the recorded job ended (Summary::job, meta `job_exit`), said in the
// report's first lines: a job that failed or was stopped is not mistaken for
// a clean run, and one that failed before completing a step has its findings
// marked as describing its start-up only. The report formats stay as they are;
// `gpuscope analyze` adds the line (text, Markdown) and `summary.job_exit`
// (JSON) with with_job_end.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/analysis.h"

namespace gpuscope::analyzer {

// Whether the job failed or was stopped before completing a step: its findings describe start-up only.
bool startup_only(const Summary& s);

// "job              FAILED: exit code 1 after 1.020 s, 0 steps completed; ..."
// without the label; empty when the recording does not say how the job ended.
std::string job_end_line(const Summary& s);

// `report` (of `format`: text, md/markdown, json; others unchanged) with the
// job's end added: a line after the first line of text, a paragraph after the
// title of Markdown, `summary.job_exit` first in JSON's summary.
std::string with_job_end(std::string report, std::string_view format, const Summary& s);

}  // namespace gpuscope::analyzer
