// Hotspot tables and the memory summary, computed from the context.
#pragma once

#include <vector>

#include "analyzer/result.h"
#include "analyzer/context.h"

namespace gpuscope::analyzer {

std::vector<KernelStat> top_kernels(const Context& c, size_t n);
std::vector<OpStat> top_ops(const Context& c, size_t n);
std::vector<CopyStat> copy_stats(const Context& c);
std::vector<ApiStat> api_stats(const Context& c, size_t n);

// Peaks against capacity, allocation churn in the analysed steps, a
// downsampled timeline over the analysed window.
MemorySummary memory_summary(const Context& c);

}  // namespace gpuscope::analyzer
