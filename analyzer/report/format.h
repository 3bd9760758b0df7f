// Report lines and time formats shared by the report renderers; numbers,
// units and escaping per format come from common/text.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "analyzer/analysis.h"
#include "common/text.h"

namespace gpuscope::analyzer::report {

std::string ms(int64_t ns);            // "12.345" (no unit)
std::string ms_unit(double ms_value);  // "12.345 ms"
std::string seconds(int64_t ns);       // "1.234567 s", for time ranges

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
// Whether some rank ran NCCL kernels: the ranks tables then add their time and overlap.
bool has_nccl_kernels(const std::vector<RankSummary>& ranks);

}  // namespace gpuscope::analyzer::report
