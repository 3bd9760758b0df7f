// Inline SVG charts for the HTML report; no script, no external resources.
// Every label goes through html_escape.
#pragma once

#include <string>
#include <vector>

#include "analyzer/result.h"

namespace gpuscope::analyzer::report {

// Colors of the breakdown categories, in Breakdown order.
const char* category_color(int i);

std::string step_breakdown_chart(const std::vector<StepInfo>& steps);
std::string step_time_chart(const std::vector<StepInfo>& steps, double median_ms);
std::string top_kernels_chart(const std::vector<KernelStat>& kernels);
std::string memory_chart(const MemorySummary& m);

}  // namespace gpuscope::analyzer::report
