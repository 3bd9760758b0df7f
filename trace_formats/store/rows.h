// One struct per data table. fields() hands the writer each value with its
// column's name, in the table's column order: the writer checks the count
// against the schema, tests/trace_formats/store/rows_test.cpp the names. Enum columns hold the
// codes of schema/enums.h. Timestamps: ns since meta.origin_ns.
// String columns (`*_id` in the schema) are passed as text and interned by
// the writer. Nullable integers use store::kNull. Every field has a default,
// so a row can be written with designated initializers naming only what it sets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace_formats/schema/enums.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// The names of the two stretches the collector writes as ranges: a sampled or
// windowed recording's traced stretches (range_source `sampling_window`) and
// the untraced ones measured on the GPU (`untraced_drained`: from the GPU's
// drain when CUPTI was torn down to its drain when tracing resumed; its length
// over the steps that ended inside it is the job's step period without
// tracing, analyzer/steps.cpp).
inline constexpr std::string_view kSamplingWindowName = "gpuscope: traced";
inline constexpr std::string_view kUntracedDrainedName = "gpuscope: untraced";
// The viewer and tests still spell the two sources so; new code names
// schema::range_source.
inline constexpr int64_t kRangeSourceSamplingWindow = schema::range_source::sampling_window;
inline constexpr int64_t kRangeSourceUntracedDrained = schema::range_source::untraced_drained;

// Marks a text field that the writer interns into the string table.
struct Interned {
  std::string_view text;
  bool null = false;
  int64_t id = -1;  // already interned by this writer: bound as is
};

struct ProcessRow {
  static constexpr std::string_view kTable = "process";
  int64_t pid = 0, parent_pid = kNull;
  std::string host{}, exe{}, cmdline{};
  int64_t start_utc_ns = 0, start = 0, end = 0;
  int64_t rank = kNull, local_rank = kNull, world_size = kNull;
  std::string cupti_status{};
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("parent_pid", parent_pid); f("host", std::string_view(host));
    f("exe", std::string_view(exe)); f("cmdline", std::string_view(cmdline));
    f("start_utc_ns", start_utc_ns); f("start", start); f("end", end); f("rank", rank);
    f("local_rank", local_rank); f("world_size", world_size);
    f("cupti_status", std::string_view(cupti_status));
  }
};

struct ThreadRow {
  static constexpr std::string_view kTable = "thread";
  int64_t pid = 0, tid = 0;
  std::string name{};
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("tid", tid); f("name", std::string_view(name));
  }
};

struct DeviceRow {
  static constexpr std::string_view kTable = "device";
  int64_t id = 0;
  std::string name{}, uuid{};
  int64_t sm_count = 0, total_memory = 0, compute_major = 0, compute_minor = 0;
  int64_t memory_bandwidth = 0, core_clock_khz = 0;
  template <class F> void fields(F&& f) const {
    f("id", id); f("name", std::string_view(name)); f("uuid", std::string_view(uuid));
    f("sm_count", sm_count); f("total_memory", total_memory); f("compute_major", compute_major);
    f("compute_minor", compute_minor); f("memory_bandwidth", memory_bandwidth);
    f("core_clock_khz", core_clock_khz);
  }
};

struct KernelRow {
  static constexpr std::string_view kTable = "kernel";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  std::string_view name{};
  int64_t name_id = -1;  // set instead of `name` when the writer's id is known
  int64_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, block_y = 1, block_z = 1;
  int64_t registers = 0, static_smem = 0, dynamic_smem = 0;
  int64_t graph_id = kNull, graph_node_id = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("context", context); f("stream", stream);
    f("correlation", correlation); f("start", start); f("end", end);
    f("name_id", Interned{name, false, name_id});
    f("grid_x", grid_x); f("grid_y", grid_y); f("grid_z", grid_z); f("block_x", block_x);
    f("block_y", block_y); f("block_z", block_z); f("registers", registers);
    f("static_smem", static_smem); f("dynamic_smem", dynamic_smem); f("graph_id", graph_id);
    f("graph_node_id", graph_node_id);
  }
};

struct MemcpyRow {
  static constexpr std::string_view kTable = "memcpy";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  int64_t copy_kind = schema::copy_kind::unknown;
  int64_t src_kind = schema::mem_kind::unknown, dst_kind = schema::mem_kind::unknown;
  int64_t bytes = 0;
  int64_t src_device = kNull, dst_device = kNull, graph_id = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("context", context); f("stream", stream);
    f("correlation", correlation); f("start", start); f("end", end); f("copy_kind", copy_kind);
    f("src_kind", src_kind); f("dst_kind", dst_kind); f("bytes", bytes); f("src_device", src_device);
    f("dst_device", dst_device); f("graph_id", graph_id);
  }
};

struct MemsetRow {
  static constexpr std::string_view kTable = "memset";
  int64_t pid = 0, device = 0, context = 0, stream = 0, correlation = 0, start = 0, end = 0;
  int64_t bytes = 0, value = 0, mem_kind = schema::mem_kind::unknown, graph_id = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("context", context); f("stream", stream);
    f("correlation", correlation); f("start", start); f("end", end); f("bytes", bytes);
    f("value", value); f("mem_kind", mem_kind); f("graph_id", graph_id);
  }
};

struct ApiCallRow {
  static constexpr std::string_view kTable = "api_call";
  int64_t pid = 0, tid = 0, domain = schema::api_domain::runtime, cbid = 0;
  std::string_view name{};
  int64_t start = 0, end = 0, correlation = 0, return_code = 0;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("tid", tid); f("domain", domain); f("cbid", cbid); f("name_id", Interned{name});
    f("start", start); f("end", end); f("correlation", correlation); f("return_code", return_code);
  }
};

struct SyncRow {
  static constexpr std::string_view kTable = "sync";
  int64_t pid = 0, tid = kNull, type = schema::sync_type::unknown, context = 0, stream = kNull;
  int64_t event = kNull, start = 0, end = 0, correlation = 0;
  int64_t wait_stream = kNull, event_correlation = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("tid", tid); f("type", type); f("context", context); f("stream", stream);
    f("event", event); f("start", start); f("end", end); f("correlation", correlation);
    f("wait_stream", wait_stream); f("event_correlation", event_correlation);
  }
};

struct MemoryEventRow {
  static constexpr std::string_view kTable = "memory_event";
  int64_t pid = 0, device = 0, ts = 0;
  int64_t op = schema::memory_op::alloc, source = schema::memory_source::cuda;
  int64_t mem_kind = schema::mem_kind::device, address = 0, bytes = 0;
  int64_t stream = kNull, correlation = kNull, total_allocated = kNull, total_reserved = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("ts", ts); f("op", op); f("source", source);
    f("mem_kind", mem_kind); f("address", address); f("bytes", bytes); f("stream", stream);
    f("correlation", correlation); f("total_allocated", total_allocated);
    f("total_reserved", total_reserved);
  }
};

struct GraphLaunchRow {
  static constexpr std::string_view kTable = "graph_launch";
  int64_t pid = 0, device = 0, context = 0, stream = 0, graph_id = 0, correlation = 0;
  int64_t start = 0, end = 0;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("context", context); f("stream", stream);
    f("graph_id", graph_id); f("correlation", correlation); f("start", start); f("end", end);
  }
};

struct RangeRow {
  static constexpr std::string_view kTable = "range";
  int64_t pid = 0, tid = 0;
  int64_t source = schema::range_source::nvtx, kind = schema::range_kind::push_pop;
  std::string_view domain{};  // empty = default domain (NULL)
  std::string_view name{};
  int64_t start = 0, end = kNull, depth = kNull, color = kNull, category = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("tid", tid); f("source", source); f("kind", kind);
    f("domain_id", Interned{domain, domain.empty()}); f("name_id", Interned{name});
    f("start", start); f("end", end); f("depth", depth); f("color", color); f("category", category);
  }
};

struct OpRow {
  static constexpr std::string_view kTable = "op";
  int64_t pid = 0, tid = 0;
  std::string_view name{};
  int64_t start = 0, end = 0, depth = 0, seq_nr = kNull, backward = 0, scope = schema::op_scope::function;
  std::string_view shapes{}, dtypes{};  // empty = not recorded (NULL)
  int64_t external_id = kNull;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("tid", tid); f("name_id", Interned{name}); f("start", start); f("end", end);
    f("depth", depth); f("seq_nr", seq_nr); f("backward", backward); f("scope", scope);
    f("shapes_id", Interned{shapes, shapes.empty()}); f("dtypes_id", Interned{dtypes, dtypes.empty()});
    f("external_id", external_id);
  }
};

struct ExternalCorrelationRow {
  static constexpr std::string_view kTable = "external_correlation";
  int64_t pid = 0, correlation = 0, external_id = 0;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("correlation", correlation); f("external_id", external_id);
  }
};

struct StepRow {
  static constexpr std::string_view kTable = "step";
  int64_t pid = 0, number = 0, start = 0, end = 0, source = schema::step_source::optimizer_step;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("number", number); f("start", start); f("end", end); f("source", source);
  }
};

struct CounterRow {
  static constexpr std::string_view kTable = "counter";
  int64_t pid = 0, device = kNull;
  std::string_view name{};
  int64_t ts = 0;
  double value = 0;
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("device", device); f("name_id", Interned{name}); f("ts", ts); f("value", value);
  }
};

struct MessageRow {
  static constexpr std::string_view kTable = "message";
  int64_t pid = 0, ts = 0, severity = schema::severity::warning;
  std::string_view text{};
  template <class F> void fields(F&& f) const {
    f("pid", pid); f("ts", ts); f("severity", severity); f("text", text);
  }
};

}  // namespace gpuscope::store
