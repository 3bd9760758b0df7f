// The names torch.profiler (Kineto) gives things, in both directions: the
// importer parses them and the exporters write them, so one table serves both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace_formats/schema/enums.h"

namespace gpuscope::formats {

// range.source of torch python_function events: they share torch_other.
inline constexpr int64_t kRangePython = schema::range_source::torch_other;

// range.domain of GPU-side annotations (Kineto's gpu_user_annotation).
inline constexpr std::string_view kGpuAnnotationDomain = "gpu_user_annotation";

struct MemcpyKinds {
  int64_t copy_kind = schema::copy_kind::unknown;
  int64_t src_kind = schema::mem_kind::unknown, dst_kind = schema::mem_kind::unknown;
};

// "Memcpy HtoD (Pageable -> Device)" -> {HtoD, pageable, device}; unknown parts are `unknown`.
MemcpyKinds parse_memcpy_name(std::string_view name);
std::string memcpy_name(int64_t copy_kind, int64_t src_kind, int64_t dst_kind);
// "Memset (Device)" -> mem_kind device.
int64_t parse_memset_kind(std::string_view name);
std::string memset_name(int64_t mem_kind);
std::string_view copy_kind_name(int64_t copy_kind);  // "HtoD"
std::string_view mem_kind_name(int64_t mem_kind);    // "Pageable"

// Kineto cuda_sync names <-> sync.type.
int64_t parse_sync_type(std::string_view name);
std::string_view sync_name(int64_t type);

// DataLoader, optimizer and ProfilerStep ranges are recognised by name;
// returns their range source, or 0 (no range_source) for any other name.
int64_t special_range_source(std::string_view name);
// N of "ProfilerStep#N", or INT64_MIN.
int64_t profiler_step_number(std::string_view name);
// step.source <-> the names of enum step_source (the Kineto export's "step
// source" argument); an unknown name or code reads as profiler_step.
int64_t step_source_code(std::string_view name);
std::string_view step_source_name(int64_t code);

// Autograd backward nodes ("AddmmBackward0") as opposed to the engine's wrappers.
bool is_backward_name(std::string_view name);
// "GPU 0" style process names/labels Kineto gives device rows.
bool is_gpu_label(std::string_view label);

// Copies JSON text without the whitespace outside strings.
void compact_json(std::string_view raw, std::string& out);

}  // namespace gpuscope::formats
