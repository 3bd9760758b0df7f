#include "trace_formats/import/kineto_mapper.h"

#include <algorithm>
#include <charconv>

#include "trace_formats/common/time_math.h"
#include "trace_formats/import/kineto_names.h"

namespace gpuscope::formats {

namespace {

using store::kNull;
namespace api_domain = schema::api_domain;
namespace memory_op = schema::memory_op;
namespace memory_source = schema::memory_source;
namespace mem_kind = schema::mem_kind;
namespace range_kind = schema::range_kind;
namespace range_source = schema::range_source;

// GPU rows seen before any CPU event carry this pid until finish() knows the process.
constexpr int64_t kPendingPid = -(int64_t{1} << 40);

int64_t or_default(int64_t v, int64_t fallback) { return v == kAbsent ? fallback : v; }

// First run of digits in s ("stream 7", "thread 12 (python)"), or kAbsent.
int64_t digits_in(std::string_view s) {
  size_t i = s.find_first_of("0123456789");
  if (i == std::string_view::npos) return kAbsent;
  int64_t v = 0;
  auto r = std::from_chars(s.data() + i, s.data() + s.size(), v);
  return r.ec == std::errc() ? v : kAbsent;
}

}  // namespace

enum class KinetoMapper::Cat {
  kKernel, kMemcpy, kMemset, kRuntime, kDriver, kOp, kAnnotation, kGpuAnnotation, kPython,
  kSync, kInstant, kMemory, kCounter, kMetadata, kFlow, kSkip, kOverhead, kUnknown
};

KinetoMapper::Cat KinetoMapper::classify(const TraceEvent& ev) const {
  std::string_view ph = ev.ph;
  if (ph == "X") {
    char buf[32];
    std::string_view cat = ascii_lower(ev.cat, buf, sizeof buf);
    if (ev.cat.size() > sizeof buf) return Cat::kUnknown;
    if (cat.empty()) return Cat::kOp;  // the legacy profiler writes no categories
    if (cat == "kernel") return Cat::kKernel;
    if (cat == "gpu_memcpy" || cat == "memcpy") return Cat::kMemcpy;
    if (cat == "gpu_memset" || cat == "memset") return Cat::kMemset;
    if (cat == "cuda_runtime" || cat == "runtime") return Cat::kRuntime;
    if (cat == "cuda_driver") return Cat::kDriver;
    if (cat == "cpu_op" || cat == "operator") return Cat::kOp;
    if (cat == "user_annotation") return Cat::kAnnotation;
    if (cat == "gpu_user_annotation") return Cat::kGpuAnnotation;
    if (cat == "python_function" || cat == "python") return Cat::kPython;
    if (cat == "cuda_sync") return Cat::kSync;
    if (cat == "overhead") return Cat::kOverhead;  // CUPTI's overhead records (Kineto's, and gpuscope's export)
    if (cat == "trace") return Cat::kSkip;  // Kineto's profiling-span bookkeeping
    return Cat::kUnknown;
  }
  if (ph == "i" || ph == "I") {
    if (ev.name == "[memory]" || ev.name == "[cuda memory]") return Cat::kMemory;
    // Kineto's own markers ("Iteration Start", "Record Window End") sit on string pids.
    if (!ev.pid.is_number && ev.cat.empty()) return Cat::kSkip;
    return Cat::kInstant;
  }
  if (ph == "C") return Cat::kCounter;
  if (ph == "M") return Cat::kMetadata;
  if (ph == "s" || ph == "f" || ph == "t") return Cat::kFlow;
  return Cat::kUnknown;
}

int64_t KinetoMapper::rel(int64_t ts) {
  if (!have_origin_) {
    have_origin_ = true;
    origin_ns_ = ts;
  }
  const int64_t r = saturating_sub(ts, origin_ns_);
  if (r < min_rel_) min_rel_ = r;
  return r;
}

int64_t KinetoMapper::end_of(const TraceEvent& ev, int64_t start) const {
  return saturating_add(start, ev.dur == kAbsent || ev.dur < 0 ? 0 : ev.dur);
}

int64_t KinetoMapper::cpu_pid(const TraceId& id) {
  if (id.is_number) return id.number;
  if (!id.present) return main_pid_ == kAbsent ? 0 : main_pid_;
  auto it = synthetic_ids_.find(std::string(id.text));
  if (it != synthetic_ids_.end()) return it->second;
  int64_t v = digits_in(id.text);
  if (v == kAbsent || id.text.find_first_not_of("0123456789") != std::string_view::npos) v = next_synthetic_++;
  synthetic_ids_.emplace(std::string(id.text), v);
  return v;
}

int64_t KinetoMapper::cpu_tid(const TraceId& id) {
  if (id.is_number && !overlap_rows_.empty() && overlap_rows_.count(id.number))
    return id.number & ((int64_t{1} << 28) - 1);
  if (id.is_number) return id.number < 0 && id.number != kAbsent ? -id.number : id.number;
  if (!id.present) return 0;
  int64_t v = digits_in(id.text);
  if (v != kAbsent) return v;
  auto [it, added] = synthetic_ids_.emplace(std::string(id.text), next_synthetic_);
  if (added) ++next_synthetic_;
  return it->second;
}

int64_t KinetoMapper::gpu_owner_pid() {
  if (main_pid_ != kAbsent) return main_pid_;
  used_pending_pid_ = true;
  return kPendingPid;
}

void KinetoMapper::note_process(int64_t pid, int64_t start, int64_t end) {
  if (main_pid_ == kAbsent) main_pid_ = pid;
  Process& p = processes_[pid];
  p.start = std::min(p.start, start);
  p.end = std::max(p.end, end);
}

KinetoMapper::Thread& KinetoMapper::thread(int64_t pid, int64_t tid) {
  return threads_[(static_cast<uint64_t>(pid) << 32) ^ static_cast<uint64_t>(tid)];
}

void KinetoMapper::on_event(const TraceEvent& ev) {
  ++counts_.events;
  Cat cat = classify(ev);
  bool timed = cat != Cat::kMetadata && cat != Cat::kFlow && cat != Cat::kSkip && cat != Cat::kUnknown;
  if (ev.invalid && cat != Cat::kFlow && cat != Cat::kSkip && cat != Cat::kUnknown) {
    ++counts_.dropped[ev.invalid];
    ++recognized_;  // a trace event, with a bad number
    return;
  }
  if (timed && ev.ts == kAbsent) {
    ++counts_.dropped["no ts"];
    return;
  }
  switch (cat) {
    case Cat::kKernel: add_kernel(ev); break;
    case Cat::kMemcpy: add_memcpy(ev); break;
    case Cat::kMemset: add_memset(ev); break;
    case Cat::kRuntime: add_api(ev, api_domain::runtime); break;
    case Cat::kDriver: add_api(ev, api_domain::driver); break;
    case Cat::kSync: add_sync(ev); break;
    case Cat::kGpuAnnotation: add_gpu_annotation(ev); break;
    case Cat::kMemory: add_memory(ev); break;
    case Cat::kCounter: add_counter(ev); break;
    case Cat::kMetadata: add_metadata(ev); ++recognized_; return;
    case Cat::kFlow: count_skipped("flow (" + std::string(ev.cat) + ")"); ++recognized_; return;
    case Cat::kSkip: count_skipped(ev.cat.empty() ? "marker" : std::string(ev.cat)); ++recognized_; return;
    case Cat::kUnknown:
      count_unknown(ev.ph == "X" ? std::string(ev.cat) : "ph:" + std::string(ev.ph));
      return;
    case Cat::kPython: add_range(ev, kRangePython, range_kind::push_pop); break;
    case Cat::kOverhead: add_overhead(ev); break;
    case Cat::kInstant:
      add_range(ev, ev.source == "nvtx" ? range_source::nvtx : range_source::torch_other, range_kind::mark);
      break;
    case Cat::kOp:
    case Cat::kAnnotation: {
      int64_t special = special_range_source(ev.name);
      if (special == range_source::profiler_step && !ev.step_source.empty()) {
        // A step the exporter wrote for a step without its own range: only a step row.
        int64_t pid = cpu_pid(ev.pid);
        int64_t start = rel(ev.ts);
        note_process(pid, start, end_of(ev, start));
        add_step(ev, start, end_of(ev, start), pid);
      } else if (special != 0) {
        add_range(ev, special, range_kind::push_pop);
      } else if (cat == Cat::kOp) {
        add_op(ev);
      } else {
        add_range(ev, ev.source == "nvtx" ? range_source::nvtx : range_source::torch_user,
                  ev.range_kind == "start_end" ? range_kind::start_end : range_kind::push_pop);
      }
      break;
    }
  }
  ++recognized_;
}

void KinetoMapper::add_kernel(const TraceEvent& ev) {
  store::KernelRow r;
  r.pid = gpu_owner_pid();
  r.device = or_default(ev.device, ev.pid.is_number ? ev.pid.number : 0);
  gpu_pids_.insert(ev.pid.is_number ? ev.pid.number : r.device);
  r.context = or_default(ev.context, 0);
  r.stream = or_default(ev.stream, cpu_tid(ev.tid));
  r.correlation = or_default(ev.correlation, 0);
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  r.name = ev.name;
  if (ev.grid[0] != kAbsent) {
    r.grid_x = ev.grid[0];
    r.grid_y = or_default(ev.grid[1], 1);
    r.grid_z = or_default(ev.grid[2], 1);
  }
  if (ev.block[0] != kAbsent) {
    r.block_x = ev.block[0];
    r.block_y = or_default(ev.block[1], 1);
    r.block_z = or_default(ev.block[2], 1);
  }
  r.registers = or_default(ev.registers, 0);
  // Kineto reports static + dynamic as one "shared memory" value.
  r.static_smem = or_default(ev.static_smem, or_default(ev.shared_memory, 0));
  r.dynamic_smem = or_default(ev.dynamic_smem, 0);
  r.graph_id = ev.graph_id;
  r.graph_node_id = ev.graph_node_id;
  out_.add(r);
  ++counts_.kernels;
}

void KinetoMapper::add_memcpy(const TraceEvent& ev) {
  store::MemcpyRow r;
  r.pid = gpu_owner_pid();
  r.device = or_default(ev.device, ev.pid.is_number ? ev.pid.number : 0);
  gpu_pids_.insert(ev.pid.is_number ? ev.pid.number : r.device);
  r.context = or_default(ev.context, 0);
  r.stream = or_default(ev.stream, cpu_tid(ev.tid));
  r.correlation = or_default(ev.correlation, 0);
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  MemcpyKinds k = parse_memcpy_name(ev.name);
  r.copy_kind = k.copy_kind;
  r.src_kind = k.src_kind;
  r.dst_kind = k.dst_kind;
  r.bytes = or_default(ev.bytes, 0);
  r.src_device = ev.src_device;
  r.dst_device = ev.dst_device;
  r.graph_id = ev.graph_id;
  out_.add(r);
  ++counts_.memcpys;
}

void KinetoMapper::add_memset(const TraceEvent& ev) {
  store::MemsetRow r;
  r.pid = gpu_owner_pid();
  r.device = or_default(ev.device, ev.pid.is_number ? ev.pid.number : 0);
  gpu_pids_.insert(ev.pid.is_number ? ev.pid.number : r.device);
  r.context = or_default(ev.context, 0);
  r.stream = or_default(ev.stream, cpu_tid(ev.tid));
  r.correlation = or_default(ev.correlation, 0);
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  r.bytes = or_default(ev.bytes, 0);
  r.mem_kind = parse_memset_kind(ev.name);
  r.graph_id = ev.graph_id;
  out_.add(r);
  ++counts_.memsets;
}

void KinetoMapper::add_api(const TraceEvent& ev, int64_t domain) {
  store::ApiCallRow r;
  r.pid = cpu_pid(ev.pid);
  r.tid = cpu_tid(ev.tid);
  r.domain = domain;
  r.cbid = or_default(ev.cbid, 0);
  r.name = ev.name;
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  r.correlation = or_default(ev.correlation, 0);
  r.return_code = or_default(ev.return_code, 0);
  note_process(r.pid, r.start, r.end);
  out_.add(r);
  ++counts_.api_calls;
  // The op -> kernel link: the op open around this launch has this External id.
  if (ev.external_id != kAbsent && ev.external_id != 0 && r.correlation != 0) {
    out_.put(store::ExternalCorrelationRow{r.pid, r.correlation, ev.external_id});
    ++counts_.correlations;
  }
}

void KinetoMapper::add_sync(const TraceEvent& ev) {
  store::SyncRow r;
  r.pid = gpu_owner_pid();
  r.type = parse_sync_type(ev.name);
  r.context = or_default(ev.context, 0);
  r.stream = ev.stream == kAbsent || ev.stream < 0 ? kNull : ev.stream;
  r.event = ev.event_id == kAbsent || ev.event_id < 0 ? kNull : ev.event_id;
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  r.correlation = or_default(ev.correlation, 0);
  out_.add(r);
  ++counts_.syncs;
}

void KinetoMapper::add_op(const TraceEvent& ev) {
  store::OpRow r;
  r.pid = cpu_pid(ev.pid);
  r.tid = cpu_tid(ev.tid);
  r.name = ev.name;
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  note_process(r.pid, r.start, r.end);
  Thread& t = thread(r.pid, r.tid);
  if (r.start < t.last_op_start) unsorted_ops_ = true;
  t.last_op_start = r.start;
  while (!t.op_ends.empty() && t.op_ends.back() <= r.start) t.op_ends.pop_back();
  r.depth = static_cast<int64_t>(t.op_ends.size());
  t.op_ends.push_back(r.end);
  r.seq_nr = ev.seq_nr == kAbsent || ev.seq_nr < 0 ? kNull : ev.seq_nr;
  r.backward = is_backward_name(ev.name) ? 1 : 0;
  r.scope = r.backward ? schema::op_scope::backward_function : schema::op_scope::function;
  dims_.clear();
  types_.clear();
  if (!ev.input_dims.empty()) compact_json(ev.input_dims, dims_);
  if (!ev.input_type.empty()) compact_json(ev.input_type, types_);
  r.shapes = dims_;
  r.dtypes = types_;
  r.external_id = ev.external_id == kAbsent || ev.external_id == 0 ? kNull : ev.external_id;
  out_.add(r);
  ++counts_.ops;
}

void KinetoMapper::add_range(const TraceEvent& ev, int64_t source, int64_t kind) {
  store::RangeRow r;
  r.pid = cpu_pid(ev.pid);
  r.tid = cpu_tid(ev.tid);
  r.source = source;
  r.kind = kind;
  r.domain = ev.domain;
  r.name = ev.name;
  r.start = rel(ev.ts);
  r.end = kind == range_kind::mark ? r.start : ev.unclosed ? kNull : end_of(ev, r.start);
  note_process(r.pid, r.start, r.end == kNull ? r.start : r.end);
  if (kind == range_kind::push_pop) {
    Thread& t = thread(r.pid, r.tid);
    if (r.start < t.last_range_start) unsorted_ranges_ = true;
    t.last_range_start = r.start;
    while (!t.range_ends.empty() && t.range_ends.back() <= r.start) t.range_ends.pop_back();
    r.depth = static_cast<int64_t>(t.range_ends.size());
    t.range_ends.push_back(r.end == kNull ? INT64_MAX : r.end);
  }
  r.color = ev.color;
  r.category = ev.nvtx_category;
  out_.add(r);
  ++counts_.ranges;
  if (source == range_source::profiler_step) add_step(ev, r.start, r.end == kNull ? r.start : r.end, r.pid);
}

// Kineto writes CUPTI's overhead on pid -1 (the host, no process): such a
// record goes to the job's process, on its main thread.
void KinetoMapper::add_overhead(const TraceEvent& ev) {
  if (ev.pid.is_number && ev.pid.number >= 0) return add_range(ev, range_source::tracer_overhead, range_kind::push_pop);
  store::RangeRow r;
  r.pid = gpu_owner_pid();
  r.tid = ev.tid.is_number && ev.tid.number > 0 ? ev.tid.number : r.pid == kPendingPid ? 0 : r.pid;
  r.source = range_source::tracer_overhead;
  r.kind = range_kind::push_pop;
  r.name = ev.name;
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  out_.add(r);
  ++counts_.ranges;
}

void KinetoMapper::add_step(const TraceEvent& ev, int64_t start, int64_t end, int64_t pid) {
  store::StepRow s;
  s.pid = pid;
  int64_t n = profiler_step_number(ev.name);
  s.number = n == kAbsent ? next_step_ : n;
  next_step_ = saturating_add(s.number, 1);  // ProfilerStep#9223372036854775807 exists in fuzzed traces
  s.start = start;
  s.end = end;
  s.source = ev.step_source.empty() ? int64_t{schema::step_source::profiler_step} : step_source_code(ev.step_source);
  out_.add(s);
  ++counts_.steps;
}

void KinetoMapper::add_gpu_annotation(const TraceEvent& ev) {
  // GPU-side annotations live on a stream, not a thread: tid holds the stream
  // and `category` the device (see docs/formats.md).
  store::RangeRow r;
  r.pid = gpu_owner_pid();
  int64_t device = or_default(ev.device, ev.pid.is_number ? ev.pid.number : 0);
  gpu_pids_.insert(ev.pid.is_number ? ev.pid.number : device);
  r.tid = or_default(ev.stream, cpu_tid(ev.tid));
  r.source = range_source::torch_other;
  r.kind = range_kind::start_end;
  r.domain = kGpuAnnotationDomain;
  r.name = ev.name;
  r.start = rel(ev.ts);
  r.end = end_of(ev, r.start);
  r.category = device;
  out_.add(r);
  ++counts_.ranges;
}

void KinetoMapper::add_memory(const TraceEvent& ev) {
  store::MemoryEventRow r;
  r.pid = cpu_pid(ev.pid);
  r.ts = rel(ev.ts);
  note_process(r.pid, r.ts, r.ts);
  int64_t bytes = or_default(ev.mem_bytes, 0);
  r.op = bytes < 0 ? memory_op::free : memory_op::alloc;
  r.bytes = bytes < 0 ? (bytes == INT64_MIN + 1 ? INT64_MAX : -bytes) : bytes;
  bool cuda = ev.device_type == 1;
  r.device = cuda ? or_default(ev.device_id, 0) : -1;
  r.mem_kind = cuda ? mem_kind::device : mem_kind::pageable;
  r.source = ev.source == "cuda" || ev.name == "[cuda memory]" ? memory_source::cuda : memory_source::torch_allocator;
  r.address = or_default(ev.addr, 0);
  r.stream = ev.stream;
  r.correlation = ev.correlation;
  r.total_allocated = ev.total_allocated;
  r.total_reserved = ev.total_reserved;
  out_.add(r);
  ++counts_.memory_events;
}

void KinetoMapper::add_counter(const TraceEvent& ev) {
  store::CounterRow r;
  bool on_gpu = ev.pid.is_number && gpu_pids_.count(ev.pid.number);
  r.pid = on_gpu ? gpu_owner_pid() : cpu_pid(ev.pid);
  r.device = on_gpu ? ev.pid.number : kNull;
  r.ts = rel(ev.ts);
  for (const auto& [key, value] : ev.counters) {
    if (key == "value" || ev.counters.size() == 1) {
      r.name = ev.name;
    } else {
      scratch_.assign(ev.name);
      scratch_ += '.';
      scratch_ += key;
      r.name = scratch_;
    }
    r.value = value;
    out_.add(r);
    ++counts_.counters;
  }
}

void KinetoMapper::add_metadata(const TraceEvent& ev) {
  if (ev.name == "process_name" || ev.name == "process_labels") {
    std::string_view label = ev.name == "process_name" ? ev.arg_name : ev.arg_labels;
    if (!ev.pid.present) return;
    if (ev.pid.is_number && is_gpu_label(label)) {
      gpu_pids_.insert(ev.pid.number);
      return;
    }
    if (ev.name == "process_name" && ev.pid.is_number) processes_[ev.pid.number].name = std::string(label);
  } else if (ev.name == "thread_name" && ev.pid.is_number && ev.tid.present) {
    if (ev.tid.is_number && ev.tid.number >= (int64_t{1} << 28) && ev.tid.number < (int64_t{4} << 28) &&
        ev.arg_name.find(" (overlapping") != std::string_view::npos) {
      overlap_rows_.insert(ev.tid.number);
      return;
    }
    thread_names_[{ev.pid.number, cpu_tid(ev.tid)}] = std::string(ev.arg_name);
  }
}

void KinetoMapper::on_device(const DeviceProps& d) {
  if (d.id == kAbsent) return;
  store::DeviceRow r;
  r.id = d.id;
  r.name = d.name;
  r.uuid = d.uuid;
  r.sm_count = d.sm_count;
  r.total_memory = d.total_memory;
  r.compute_major = d.compute_major;
  r.compute_minor = d.compute_minor;
  r.memory_bandwidth = d.memory_bandwidth;
  r.core_clock_khz = d.core_clock_khz;
  out_.put(r);
}

void KinetoMapper::on_distributed(const DistributedInfo& info) { dist_ = info; }

void KinetoMapper::on_top_level(std::string_view key, std::string_view value) {
  if (top_level_.size() < 64 && value.size() < 4096) top_level_[std::string(key)] = std::string(value);
}

}  // namespace gpuscope::formats
