#include "trace_formats/schema/schema.h"

#include <array>

#include "trace_formats/schema/enums.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::schema {
namespace {

constexpr ColumnType I = ColumnType::kInteger;
constexpr ColumnType R = ColumnType::kReal;
constexpr ColumnType T = ColumnType::kText;
constexpr ColumnType TS = ColumnType::kTime;
constexpr ColumnType S = ColumnType::kStringId;
constexpr ColumnType P = ColumnType::kPid;

// Every timestamp column holds nanoseconds since meta.origin_ns on the
// recording's one clock (CLOCK_MONOTONIC of the recording host).
constexpr std::array kMeta{
    Column{"key", T, "Setting name: one of the keys listed under [Meta keys](#meta-keys) below (trace_formats/schema/meta_keys.h)."},
    Column{"value", T, "Setting value, as text."},
};
constexpr std::array kEnum{
    Column{"type", T, "Enum name as used in the column docs, e.g. `copy_kind`."},
    Column{"value", I, "Integer stored in the data tables."},
    Column{"name", T, "Readable name."},
};
constexpr std::array kString{
    Column{"id", I, "Key referenced by every `*_id` column that names a string."},
    Column{"value", T, "The string, bytes as recorded (kernel names may hold any byte)."},
};
constexpr std::array kProcess{
    Column{"pid", P, "Operating-system process id."},
    Column{"parent_pid", P, "Parent process id."},
    Column{"host", T, "Host name."},
    Column{"exe", T, "Executable path."},
    Column{"cmdline", T, "Command line, arguments separated by spaces."},
    Column{"start_utc_ns", I, "Process start (collector init) in ns since the Unix epoch, UTC."},
    Column{"start", TS, "Collector init, ns since origin."},
    Column{"end", TS, "Last flush, ns since origin; updated at every flush."},
    Column{"rank", I, "RANK from the environment, NULL if unset."},
    Column{"local_rank", I, "LOCAL_RANK from the environment, NULL if unset."},
    Column{"world_size", I, "WORLD_SIZE from the environment, NULL if unset."},
    Column{"cupti_status", T, "`ok`, or why GPU activity was not recorded (no GPU, no CUPTI, CUPTI taken by another tool)."},
};
constexpr std::array kThread{
    Column{"pid", P, "Process id."},
    Column{"tid", I, "Operating-system thread id."},
    Column{"name", T, "Thread name (/proc comm), may be NULL."},
};
constexpr std::array kDevice{
    Column{"id", I, "CUDA device ordinal."},
    Column{"name", T, "Device name, e.g. `NVIDIA H200`."},
    Column{"uuid", T, "Device UUID, hex."},
    Column{"sm_count", I, "Streaming multiprocessors."},
    Column{"total_memory", I, "Global memory, bytes."},
    Column{"compute_major", I, "Compute capability, major."},
    Column{"compute_minor", I, "Compute capability, minor."},
    Column{"memory_bandwidth", I, "Global memory bandwidth, bytes per second (0 if unknown)."},
    Column{"core_clock_khz", I, "Core clock rate, kHz."},
};
constexpr std::array kKernel{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process that launched it."},
    Column{"device", I, "Device ordinal."},
    Column{"context", I, "CUDA context id."},
    Column{"stream", I, "CUDA stream id."},
    Column{"correlation", I, "Correlation id, equal to the launching `api_call.correlation` of the same pid."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin."},
    Column{"name_id", S, "Demangled kernel name (string.id)."},
    Column{"grid_x", I, "Grid size, x."},
    Column{"grid_y", I, "Grid size, y."},
    Column{"grid_z", I, "Grid size, z."},
    Column{"block_x", I, "Block size, x."},
    Column{"block_y", I, "Block size, y."},
    Column{"block_z", I, "Block size, z."},
    Column{"registers", I, "Registers per thread."},
    Column{"static_smem", I, "Static shared memory per block, bytes."},
    Column{"dynamic_smem", I, "Dynamic shared memory per block, bytes."},
    Column{"graph_id", I, "CUDA graph id when launched as a graph node, else NULL."},
    Column{"graph_node_id", I, "CUDA graph node id, else NULL."},
};
constexpr std::array kMemcpy{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"device", I, "Device ordinal."},
    Column{"context", I, "CUDA context id."},
    Column{"stream", I, "CUDA stream id."},
    Column{"correlation", I, "Correlation id of the API call."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin."},
    Column{"copy_kind", I, "Direction (enum `copy_kind`)."},
    Column{"src_kind", I, "Source memory kind (enum `mem_kind`)."},
    Column{"dst_kind", I, "Destination memory kind (enum `mem_kind`)."},
    Column{"bytes", I, "Bytes copied."},
    Column{"src_device", I, "Source device for peer copies, else NULL."},
    Column{"dst_device", I, "Destination device for peer copies, else NULL."},
    Column{"graph_id", I, "CUDA graph id, else NULL."},
};
constexpr std::array kMemset{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"device", I, "Device ordinal."},
    Column{"context", I, "CUDA context id."},
    Column{"stream", I, "CUDA stream id."},
    Column{"correlation", I, "Correlation id of the API call."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin."},
    Column{"bytes", I, "Bytes set."},
    Column{"value", I, "Value written."},
    Column{"mem_kind", I, "Memory kind (enum `mem_kind`)."},
    Column{"graph_id", I, "CUDA graph id, else NULL."},
};
constexpr std::array kApiCall{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"tid", I, "Calling thread."},
    Column{"domain", I, "Runtime or driver (enum `api_domain`)."},
    Column{"cbid", I, "CUPTI callback id within the domain."},
    Column{"name_id", S, "Function name, e.g. `cudaLaunchKernel` (string.id)."},
    Column{"start", TS, "Entry, ns since origin."},
    Column{"end", TS, "Return, ns since origin."},
    Column{"correlation", I, "Correlation id; GPU activity of the same pid with this id was caused by this call."},
    Column{"return_code", I, "cudaError_t / CUresult returned."},
};
constexpr std::array kSync{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"tid", I, "Waiting thread, when known (else NULL)."},
    Column{"type", I, "What was waited on (enum `sync_type`)."},
    Column{"context", I, "CUDA context id."},
    Column{"stream", I, "Stream waited on, else NULL."},
    Column{"event", I, "CUDA event id waited on, else NULL."},
    Column{"start", TS, "Start of the wait, ns since origin."},
    Column{"end", TS, "End of the wait, ns since origin."},
    Column{"correlation", I, "Correlation id of the API call that waited."},
    Column{"wait_stream", I, "Stream waits (`stream_wait_event`) and event syncs (`event_synchronize`): the stream the awaited event was recorded on (Kineto's `wait_on_stream`), else NULL. Schema v2 (event syncs: NULL in recordings made before the collector linked them, such as `tests/data/mlp_h200.db`).", 2},
    Column{"event_correlation", I, "Stream waits and event syncs: correlation id of the `cudaEventRecord` that recorded the awaited event (Kineto's `wait_on_cuda_event_record_corr_id`), else NULL. Schema v2 (event syncs: as `wait_stream`).", 2},
};
constexpr std::array kMemoryEvent{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"device", I, "Device ordinal."},
    Column{"ts", TS, "Time, ns since origin."},
    Column{"op", I, "Allocation or release (enum `memory_op`)."},
    Column{"source", I, "Who reported it (enum `memory_source`)."},
    Column{"mem_kind", I, "Memory kind (enum `mem_kind`)."},
    Column{"address", I, "Address."},
    Column{"bytes", I, "Size, bytes (positive for both operations)."},
    Column{"stream", I, "Stream for stream-ordered allocations, else NULL."},
    Column{"correlation", I, "Correlation id of the API call, else NULL."},
    Column{"total_allocated", I, "Allocator's allocated bytes after the event (torch allocator only)."},
    Column{"total_reserved", I, "Allocator's reserved bytes after the event (torch allocator only)."},
};
constexpr std::array kGraphLaunch{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"device", I, "Device ordinal."},
    Column{"context", I, "CUDA context id."},
    Column{"stream", I, "CUDA stream id."},
    Column{"graph_id", I, "CUDA graph id."},
    Column{"correlation", I, "Correlation id of the launching API call."},
    Column{"start", TS, "Start of the first node, ns since origin."},
    Column{"end", TS, "End of the last node, ns since origin."},
};
constexpr std::array kRange{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"tid", I, "Thread that opened the range."},
    Column{"source", I, "Who produced it (enum `range_source`)."},
    Column{"kind", I, "Push/pop, start/end or mark (enum `range_kind`)."},
    Column{"domain_id", S, "NVTX domain name (string.id), NULL for the default domain."},
    Column{"name_id", S, "Range name (string.id)."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin; equal to start for marks; NULL if never closed."},
    Column{"depth", I, "Nesting depth on its thread for push/pop ranges (0 = outermost), else NULL."},
    Column{"color", I, "ARGB color when given, else NULL."},
    Column{"category", I, "NVTX category when given, else NULL."},
};
constexpr std::array kOp{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"tid", I, "Thread."},
    Column{"name_id", S, "Op name, e.g. `aten::addmm` (string.id)."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin."},
    Column{"depth", I, "Nesting depth among ops on its thread (0 = top level)."},
    Column{"seq_nr", I, "Autograd sequence number (links forward and backward), NULL if none."},
    Column{"backward", I, "1 for autograd backward functions, else 0."},
    Column{"scope", I, "RecordFunction scope: torch's `at::RecordScope` as the plugin passes it on (0 function, 1 backward function, 2 torchscript function, 3 kernel function dtype, 4 custom class, 5 build feature, 6 lite interpreter, 7 user scope, 8 static runtime op, 9 static runtime model); an imported trace gives 1 to backward functions, else 0."},
    Column{"shapes_id", S, "Input shapes as JSON, e.g. `[[32,128],[128]]` (string.id), NULL if not recorded."},
    Column{"dtypes_id", S, "Input dtypes as JSON, e.g. `[\"float\",\"float\"]` (string.id), NULL if not recorded."},
    Column{"external_id", I, "Id of the op for external_correlation: the API calls made while it was the innermost op on its thread. Ops that `record` gave by position to a step recorded without ops (meta `torch_op_steps`) have ids from 2^62 up; their times are interpolated between the step's API calls, their seq_nr is NULL."},
};
constexpr std::array kExternalCorrelation{
    Column{"pid", P, "Process id."},
    Column{"correlation", I, "CUPTI correlation id of an API call (api_call.correlation)."},
    Column{"external_id", I, "Id of the op or range that was open when the call was made (op.external_id)."},
};
constexpr std::array kStep{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"number", I, "Step number, from 0 (or as ProfilerStep#N says)."},
    Column{"start", TS, "Start, ns since origin."},
    Column{"end", TS, "End, ns since origin."},
    Column{"source", I, "How the boundary was found (enum `step_source`; `graph_launch`: the collector's, in a loop whose whole step is one CUDA graph replay, each launch of that graph closing a step, numbered on from the plugin's last)."},
};
constexpr std::array kCounter{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process that sampled it."},
    Column{"device", I, "Device ordinal, NULL for host counters."},
    Column{"name_id", S, "Counter name, e.g. `gpu_memory_used`, `nvml_sm_util_pct`, `nvml_power_w` (string.id)."},
    Column{"ts", TS, "Sample time, ns since origin."},
    Column{"value", R, "Value in the unit the name says."},
};
constexpr std::array kCollectorStat{
    Column{"pid", P, "Process id."},
    Column{"key", T, "Statistic, e.g. `records_kernel`, `dropped_cupti`, `buffers_used`, `flushes`."},
    Column{"value", I, "Value, updated at every flush."},
};
constexpr std::array kMessage{
    Column{"id", I, "Row key."},
    Column{"pid", P, "Process id."},
    Column{"ts", TS, "Time, ns since origin."},
    Column{"severity", I, "Enum `severity`."},
    Column{"text", T, "What happened, one line."},
};

constexpr std::array kTables{
    Table{"meta", "Recording-wide settings; `schema_version` is checked by every reader.", kMeta, "PRIMARY KEY(key)"},
    Table{"enum", "Names of the integer codes used in other tables.", kEnum, "PRIMARY KEY(type, value)"},
    Table{"string", "Interned strings; every `*_id` column that names text points here.", kString, "PRIMARY KEY(id), UNIQUE(value)"},
    Table{"process", "One row per recorded process.", kProcess, "PRIMARY KEY(pid)"},
    Table{"thread", "Threads seen, with names.", kThread, "PRIMARY KEY(pid, tid)"},
    Table{"device", "GPU properties.", kDevice, "PRIMARY KEY(id)"},
    Table{"kernel", "GPU kernel executions (CUPTI CONCURRENT_KERNEL).", kKernel, "PRIMARY KEY(id)", true},
    Table{"memcpy", "GPU memory copies.", kMemcpy, "PRIMARY KEY(id)", true},
    Table{"memset", "GPU memory sets.", kMemset, "PRIMARY KEY(id)", true},
    Table{"api_call", "CUDA runtime and driver API calls (no-op queries such as cudaGetDevice, error strings and function attribute set-up are filtered by default).", kApiCall, "PRIMARY KEY(id)", true},
    Table{"sync", "Host-side waits on the GPU (CUPTI SYNCHRONIZATION).", kSync, "PRIMARY KEY(id)", true},
    Table{"memory_event", "GPU memory allocations and releases (CUDA and the torch caching allocator).", kMemoryEvent, "PRIMARY KEY(id)", true},
    Table{"graph_launch", "CUDA graph launches, one row per launch.", kGraphLaunch, "PRIMARY KEY(id)", true},
    Table{"range", "Annotated CPU ranges and marks: NVTX, torch record_function, DataLoader waits, optimizer calls; in sampled or windowed recordings (`record --sample`, `--delay`, `--duration`) also each stretch that was traced (source `sampling_window`, on the main thread, named `gpuscope: traced`): only steps wholly inside one have GPU activity and ops. Each untraced stretch that began with CUPTI torn down is also written from the step boundary where tracing paused (its start moved later by the teardown's own time: the drain, the decoding and cuptiFinalize) to the GPU's drain when tracing resumed (source `untraced_drained`, named `gpuscope: untraced`): the job's step period without tracing is its length over the steps that ended inside it. With `record --trace ...,overhead`, CUPTI's records of overhead (its buffer flushes and instrumentation; the driver's JIT compilation, module and lazy function loading and waits for command-buffer space) are ranges too (source `tracer_overhead`, named `CUPTI overhead: ...` or `CUDA overhead: ...`), on the thread they hit, or on the main thread for a device's or context's. gpuscope's own stalls where tracing switches are `tracer_overhead` ranges in every recording that switches: `gpuscope: CUPTI teardown (flush, decode, cuptiFinalize)` and `gpuscope: CUPTI resume, cuptiSubscribe` (each from the end of the GPU drain before it), then `gpuscope: CUPTI resume, enable activities`, on the thread that switched.", kRange, "PRIMARY KEY(id)", true},
    Table{"op", "PyTorch operators and autograd functions (torch plugin).", kOp, "PRIMARY KEY(id)", true},
    Table{"external_correlation", "Links API calls (and so their GPU work) to ops: op.external_id = external_id. `gpuscope record` links by thread and time after the job; without it CUPTI external correlation does.", kExternalCorrelation, "PRIMARY KEY(pid, correlation)"},
    Table{"step", "Training steps.", kStep, "PRIMARY KEY(id)", true},
    Table{"counter", "Sampled values over time: GPU memory in use, NVML utilization, power, clocks.", kCounter, "PRIMARY KEY(id)", true},
    Table{"collector_stat", "Collector statistics per process: records per kind, dropped records, buffers, bytes, flushes.", kCollectorStat, "PRIMARY KEY(pid, key)"},
    Table{"message", "Diagnostics the collector stored, e.g. why CUPTI was not used.", kMessage, "PRIMARY KEY(id)", true},
};

// The `enum` rows, from the one declaration in enums.h.
#define GPUSCOPE_ENUM_ROW(T, name, value) EnumValue{#T, value, #name},
#define GPUSCOPE_ENUM_ROWS(T, LIST) LIST(GPUSCOPE_ENUM_ROW, T)
constexpr std::array kEnums{GPUSCOPE_SCHEMA_ENUMS(GPUSCOPE_ENUM_ROWS)};
#undef GPUSCOPE_ENUM_ROWS
#undef GPUSCOPE_ENUM_ROW

std::string_view type_name(ColumnType t) {
  switch (t) {
    case ColumnType::kInteger:
    case ColumnType::kTime:
    case ColumnType::kStringId:
    case ColumnType::kPid: return "INTEGER";
    case ColumnType::kReal: return "REAL";
    case ColumnType::kText: return "TEXT";
  }
  return "BLOB";
}

std::string quote(std::string_view name) { return "\"" + std::string(name) + "\""; }

}  // namespace

std::span<const Table> tables() { return kTables; }
std::span<const EnumValue> enum_values() { return kEnums; }

const Table* find_table(std::string_view name) {
  for (const Table& t : kTables)
    if (t.name == name) return &t;
  return nullptr;
}

bool has_column(std::string_view table, std::string_view column, int version) {
  const Table* t = find_table(table);
  if (!t) return false;
  for (const Column& c : t->columns)
    if (c.name == column) return c.since <= version;
  return false;
}

std::string ddl() {
  std::string out;
  for (const Table& t : kTables) {
    out += "CREATE TABLE IF NOT EXISTS " + quote(t.name) + " (";
    for (const Column& c : t.columns) {
      out += quote(c.name);
      out += ' ';
      out += type_name(c.type);
      out += ", ";
    }
    out += t.constraints;
    out += ");\n";
  }
  for (const EnumValue& e : kEnums) {
    out += "INSERT OR IGNORE INTO \"enum\" VALUES('" + std::string(e.type) + "', " +
           std::to_string(e.value) + ", '" + std::string(e.name) + "');\n";
  }
  return out;
}

std::string insert_sql(const Table& table, bool or_ignore) {
  std::string cols, params;
  for (size_t i = table.auto_id ? 1 : 0; i < table.columns.size(); ++i) {
    if (!cols.empty()) {
      cols += ", ";
      params += ", ";
    }
    cols += quote(table.columns[i].name);
    params += '?';
  }
  return std::string(or_ignore ? "INSERT OR IGNORE INTO " : "INSERT INTO ") + quote(table.name) +
         " (" + cols + ") VALUES (" + params + ")";
}

std::string markdown() {
  std::string out =
      "# gpuscope database schema\n\n"
      "<!-- Generated from trace_formats/schema/schema.cpp and enums.h by `gpuscope schema --markdown`; "
      "tests/trace_formats/schema/schema_test.cpp fails when this page and the code disagree. -->\n\n"
      "A recording is one SQLite file. Schema version: **" + std::to_string(kVersion) +
      "** (`meta.schema_version`); readers refuse a newer version. A column marked \"Schema vN\" came "
      "with version N: recordings of older versions lack it, and readers take it as NULL there.\n\n"
      "Every timestamp is an integer number of nanoseconds since `meta.origin_ns`, on one clock "
      "(CLOCK_MONOTONIC of the recording host) for GPU and CPU sources alike; `meta.origin_utc_ns` is "
      "the same instant in ns since the Unix epoch. Columns ending in `_id` that name text point to "
      "`string.id`. Integer codes are named in the `enum` table (listed at the end). GPU activity, "
      "API calls and correlations are keyed by `pid`, since correlation ids are per process. A "
      "correlation of 0 links nothing: CUPTI gave none, or the ids it gave could not be right (CUPTI "
      "restarted after a sampled recording's teardown; the collector shifts later sessions' ids past "
      "the earlier ones so they stay unique).\n\n";
  for (const Table& t : kTables) {
    out += "## `" + std::string(t.name) + "`\n\n" + std::string(t.doc) + "\n\n";
    out += "| column | type | meaning |\n|---|---|---|\n";
    for (const Column& c : t.columns)
      out += "| `" + std::string(c.name) + "` | " + std::string(type_name(c.type)) + " | " +
             std::string(c.doc) + " |\n";
    out += "\nKey: `" + std::string(t.constraints) + "`\n\n";
  }
  out += "## Meta keys\n\nThe keys of the `meta` table (trace_formats/schema/meta_keys.h).\n\n| key | meaning |\n|---|---|\n";
  for (const meta_key::Key& k : meta_key::kMetaKeys)
    out += "| `" + std::string(k.name) + "` | " + std::string(k.doc) + " |\n";
  out += "\n";
  out += "## Enums\n\n| type | value | name |\n|---|---|---|\n";
  for (const EnumValue& e : kEnums)
    out += "| `" + std::string(e.type) + "` | " + std::to_string(e.value) + " | `" +
           std::string(e.name) + "` |\n";
  return out;
}

}  // namespace gpuscope::schema
