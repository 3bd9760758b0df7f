// The lines of an analysis that every format of analyze's report says the
// same way. Numbers, times and the HTML, Markdown and SVG pieces come from
// the report kit (report/), which this namespace reads as its own.
#pragma once

#include <string>
#include <vector>

#include "analyzer/result.h"
#include "report/format.h"
#include "report/table.h"

namespace gpuscope::analyzer::report {

// Analyze's renderers, and callers such as the viewer (report::ms_unit),
// reach the kit's units and pieces through this namespace.
using namespace gpuscope::report;

// The analysed scope in one line: process, device, steps and how they were found.
std::string scope_line(const Analysis& a);
// The job without gpuscope: "untraced step 32.500 ms (measured on the GPU in 8
// untraced steps), traced 39.866 ms: tracing cost +22.7 %; savings are judged
// against the untraced step", or why it is unknown.
std::string untraced_line(const Analysis& a);
// CUPTI's overhead records inside the analysed steps (`record --trace
// ...,overhead`): "recorded overhead 0.812 ms a step (CUPTI overhead: buffer
// flush 0.600 ms in 12, ...)", or empty when none were recorded there.
std::string tracer_overhead_line(const Analysis& a);
// The cross-rank report's scope (`gpuscope cluster`): the ranks, and the step
// the savings are a share of, the one of the process analyze would detail.
std::string cross_rank_scope_line(const Analysis& a);
// The what-if replay in plain lines (docs/rules.md, "What-if"): the model's
// check ("replay of 40 steps: 31.80 ms against the job's 32.50 ms (-2.2 %)"),
// then the plan, "1. bf16 autocast -> 51.00 ms (-15.0 %, 48.1-53.2 ms)", then
// the fixes not recommended and why. Empty when there was no replay.
std::string whatif_check_line(const Analysis& a);
std::vector<std::string> plan_lines(const Analysis& a);
// "predicted step 51.00 ms (saving 12.0-18.5 %)" for a priced finding, else "".
std::string finding_prediction(const Finding& f);
// Whether some rank ran NCCL kernels: the ranks tables then add their time and overlap.
bool has_nccl_kernels(const std::vector<RankSummary>& ranks);
// The ranks table of the HTML and Markdown reports: its columns, and a rank's
// cells as plain text, the host as recorded ("-" where a value is unknown).
Columns rank_columns(bool nccl);
std::vector<std::string> rank_cells(const RankSummary& r, bool nccl);

}  // namespace gpuscope::analyzer::report
