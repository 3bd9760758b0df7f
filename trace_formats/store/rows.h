// One struct per data table, fields in the table's column order (the writer
// checks the count against the schema). Timestamps: ns since meta.origin_ns.
// String columns (`*_id` in the schema) are passed as text and interned by
// the writer. Nullable integers use store::kNull.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/sqlite.h"

namespace gpuscope::store {

// range.source of a sampled or windowed recording's traced stretches (enum
// range_source `sampling_window`): written by the collector, read by the
// analyzer, the viewer and `info`.
inline constexpr int64_t kRangeSourceSamplingWindow = 7;
inline constexpr std::string_view kSamplingWindowName = "gpuscope: traced";
// range.source of an untraced stretch measured on the GPU (enum range_source
// `untraced_drained`): from the GPU's drain when CUPTI was torn down to its
// drain when tracing resumed. Its length over the steps that ended inside it
// is the job's step period without tracing (analyzer/steps.cpp).
inline constexpr int64_t kRangeSourceUntracedDrained = 8;
inline constexpr std::string_view kUntracedDrainedName = "gpuscope: untraced";

// Marks a text field that the writer interns into the string table.
struct Interned {
  std::string_view text;
  bool null = false;
  int64_t id = -1;  // already interned by this writer: bound as is
};

struct ProcessRow {
  static constexpr std::string_view kTable = "process";
  int64_t pid = 0, parent_pid = kNull;
  std::string host, exe, cmdline;
  int64_t start_utc_ns = 0, start = 0, end = 0;
  int64_t rank = kNull, local_rank = kNull, world_size = kNull;
  std::string cupti_status;
  template <class F> void fields(F&& f) const {
    f(pid); f(parent_pid); f(std::string_view(host)); f(std::string_view(exe));
    f(std::string_view(cmdline)); f(start_utc_ns); f(start); f(end); f(rank); f(local_rank);
    f(world_size); f(std::string_view(cupti_status));
  }
};

struct ThreadRow {
  static constexpr std::string_view kTable = "thread";
  int64_t pid = 0, tid = 0;
  std::string name;
  template <class F> void fields(F&& f) const { f(pid); f(tid); f(std::string_view(name)); }
};

struct DeviceRow {
  static constexpr std::string_view kTable = "device";
  int64_t id = 0;
  std::string name, uuid;
  int64_t sm_count = 0, total_memory = 0, compute_major = 0, compute_minor = 0;
  int64_t memory_bandwidth = 0, core_clock_khz = 0;
  template <class F> void fields(F&& f) const {
    f(id); f(std::string_view(name)); f(std::string_view(uuid)); f(sm_count); f(total_memory);
    f(compute_major); f(compute_minor); f(memory_bandwidth); f(core_clock_khz);
  }
};

struct KernelRow {
  static constexpr std::string_view kTable = "kernel";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  std::string_view name;
  int64_t name_id = -1;  // set instead of `name` when the writer's id is known
  int64_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, block_y = 1, block_z = 1;
  int64_t registers = 0, static_smem = 0, dynamic_smem = 0;
  int64_t graph_id = kNull, graph_node_id = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(context); f(stream); f(correlation); f(start); f(end);
    f(Interned{name, false, name_id});
    f(grid_x); f(grid_y); f(grid_z); f(block_x); f(block_y); f(block_z); f(registers);
    f(static_smem); f(dynamic_smem); f(graph_id); f(graph_node_id);
  }
};

struct MemcpyRow {
  static constexpr std::string_view kTable = "memcpy";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  int64_t copy_kind = 0, src_kind = 0, dst_kind = 0, bytes = 0;
  int64_t src_device = kNull, dst_device = kNull, graph_id = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(context); f(stream); f(correlation); f(start); f(end); f(copy_kind);
    f(src_kind); f(dst_kind); f(bytes); f(src_device); f(dst_device); f(graph_id);
  }
};

struct MemsetRow {
  static constexpr std::string_view kTable = "memset";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  int64_t bytes = 0, value = 0, mem_kind = 0, graph_id = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(context); f(stream); f(correlation); f(start); f(end); f(bytes);
    f(value); f(mem_kind); f(graph_id);
  }
};

struct ApiCallRow {
  static constexpr std::string_view kTable = "api_call";
  int64_t pid = 0, tid = 0, domain = 1, cbid = 0;
  std::string_view name;
  int64_t start = 0, end = 0, correlation = 0, return_code = 0;
  template <class F> void fields(F&& f) const {
    f(pid); f(tid); f(domain); f(cbid); f(Interned{name}); f(start); f(end); f(correlation);
    f(return_code);
  }
};

struct SyncRow {
  static constexpr std::string_view kTable = "sync";
  int64_t pid = 0, tid = kNull, type = 0, context = 0, stream = kNull, event = kNull;
  int64_t start = 0, end = 0, correlation = 0;
  template <class F> void fields(F&& f) const {
    f(pid); f(tid); f(type); f(context); f(stream); f(event); f(start); f(end); f(correlation);
  }
};

struct MemoryEventRow {
  static constexpr std::string_view kTable = "memory_event";
  int64_t pid = 0, device = 0, ts = 0, op = 1, source = 1, mem_kind = 3, address = 0, bytes = 0;
  int64_t stream = kNull, correlation = kNull, total_allocated = kNull, total_reserved = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(ts); f(op); f(source); f(mem_kind); f(address); f(bytes); f(stream);
    f(correlation); f(total_allocated); f(total_reserved);
  }
};

struct GraphLaunchRow {
  static constexpr std::string_view kTable = "graph_launch";
  int64_t pid = 0, device = 0, context = 0, stream = 0, graph_id = 0, correlation = 0;
  int64_t start = 0, end = 0;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(context); f(stream); f(graph_id); f(correlation); f(start); f(end);
  }
};

struct RangeRow {
  static constexpr std::string_view kTable = "range";
  int64_t pid = 0, tid = 0, source = 1, kind = 1;
  std::string_view domain;  // empty = default domain (NULL)
  std::string_view name;
  int64_t start = 0, end = kNull, depth = kNull, color = kNull, category = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(tid); f(source); f(kind); f(Interned{domain, domain.empty()}); f(Interned{name});
    f(start); f(end); f(depth); f(color); f(category);
  }
};

struct OpRow {
  static constexpr std::string_view kTable = "op";
  int64_t pid = 0, tid = 0;
  std::string_view name;
  int64_t start = 0, end = 0, depth = 0, seq_nr = kNull, backward = 0, scope = 0;
  std::string_view shapes, dtypes;  // empty = not recorded (NULL)
  int64_t external_id = kNull;
  template <class F> void fields(F&& f) const {
    f(pid); f(tid); f(Interned{name}); f(start); f(end); f(depth); f(seq_nr); f(backward);
    f(scope); f(Interned{shapes, shapes.empty()}); f(Interned{dtypes, dtypes.empty()});
    f(external_id);
  }
};

struct ExternalCorrelationRow {
  static constexpr std::string_view kTable = "external_correlation";
  int64_t pid = 0, correlation = 0, external_id = 0;
  template <class F> void fields(F&& f) const { f(pid); f(correlation); f(external_id); }
};

struct StepRow {
  static constexpr std::string_view kTable = "step";
  int64_t pid = 0, number = 0, start = 0, end = 0, source = 2;
  template <class F> void fields(F&& f) const { f(pid); f(number); f(start); f(end); f(source); }
};

struct CounterRow {
  static constexpr std::string_view kTable = "counter";
  int64_t pid = 0, device = kNull;
  std::string_view name;
  int64_t ts = 0;
  double value = 0;
  template <class F> void fields(F&& f) const {
    f(pid); f(device); f(Interned{name}); f(ts); f(value);
  }
};

struct MessageRow {
  static constexpr std::string_view kTable = "message";
  int64_t pid = 0, ts = 0, severity = 2;
  std::string_view text;
  template <class F> void fields(F&& f) const { f(pid); f(ts); f(severity); f(text); }
};

}  // namespace gpuscope::store
