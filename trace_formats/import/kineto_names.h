// The names torch.profiler (Kineto) gives things, in both directions: the
// importer parses them and the exporters write them, so one table serves both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::formats {

// range.source values (enum range_source).
inline constexpr int64_t kRangeNvtx = 1, kRangeUser = 2, kRangeDataloader = 3, kRangeOptimizer = 4,
                         kRangeProfilerStep = 5, kRangeOther = 6;
// range.source for torch python_function events shares kRangeOther.
inline constexpr int64_t kRangePython = kRangeOther;

// range.domain of GPU-side annotations (Kineto's gpu_user_annotation).
inline constexpr std::string_view kGpuAnnotationDomain = "gpu_user_annotation";

struct MemcpyKinds {
  int64_t copy_kind = 0, src_kind = 0, dst_kind = 0;
};

// "Memcpy HtoD (Pageable -> Device)" -> {1, 1, 3}; unknown parts are 0.
MemcpyKinds parse_memcpy_name(std::string_view name);
std::string memcpy_name(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
// "Memset (Device)" -> 3.
int64_t parse_memset_kind(std::string_view name);
std::string memset_name(int64_t mem_kind);
std::string_view copy_kind_name(int64_t copy_kind);  // "HtoD"
std::string_view mem_kind_name(int64_t mem_kind);    // "Pageable"

// Kineto cuda_sync names <-> sync.type.
int64_t parse_sync_type(std::string_view name);
std::string_view sync_name(int64_t type);

// DataLoader, optimizer and ProfilerStep ranges are recognised by name;
// returns their range source, or 0 for any other name.
int64_t special_range_source(std::string_view name);
// N of "ProfilerStep#N", or INT64_MIN.
int64_t profiler_step_number(std::string_view name);
// step.source <-> the names of enum step_source.
int64_t step_source_code(std::string_view name);
std::string_view step_source_name(int64_t code);

// Autograd backward nodes ("AddmmBackward0") as opposed to the engine's wrappers.
bool is_backward_name(std::string_view name);
// "GPU 0" style process names/labels Kineto gives device rows.
bool is_gpu_label(std::string_view label);

// Copies JSON text without the whitespace outside strings.
void compact_json(std::string_view raw, std::string& out);

}  // namespace gpuscope::formats
