#include "collector/cupti_decode.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "trace_formats/schema/enums.h"

namespace gpuscope::collector {

using store::kNull;

// CUPTI's copy kinds, memory kinds and synchronization types are stored as
// they are: the schema's enums take CUPTI's numbering.
constexpr bool same(int64_t cupti, int64_t schema_code) { return cupti == schema_code; }
static_assert(same(CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, schema::copy_kind::unknown) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, schema::copy_kind::HtoD) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, schema::copy_kind::DtoH) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, schema::copy_kind::HtoA) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, schema::copy_kind::AtoH) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, schema::copy_kind::AtoA) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, schema::copy_kind::AtoD) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, schema::copy_kind::DtoA) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, schema::copy_kind::DtoD) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, schema::copy_kind::HtoH) &&
              same(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, schema::copy_kind::PtoP));
static_assert(same(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, schema::mem_kind::unknown) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, schema::mem_kind::pageable) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_PINNED, schema::mem_kind::pinned) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, schema::mem_kind::device) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, schema::mem_kind::array) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, schema::mem_kind::managed) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, schema::mem_kind::device_static) &&
              same(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, schema::mem_kind::managed_static));
static_assert(same(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, schema::sync_type::unknown) &&
              same(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, schema::sync_type::event_synchronize) &&
              same(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, schema::sync_type::stream_wait_event) &&
              same(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, schema::sync_type::stream_synchronize) &&
              same(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, schema::sync_type::context_synchronize));

std::string demangle(const char* mangled) {
  if (!mangled) return "<unnamed kernel>";
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || !out) return mangled;
  std::string s(out);
  std::free(out);
  return s;
}

namespace {

int64_t graph_or_null(uint32_t graph_id) { return graph_id ? int64_t{graph_id} : kNull; }

int64_t kernel_name_id(RowSink& sink, const char* name) {
  auto it = sink.kernel_names.find(name);
  if (it == sink.kernel_names.end()) it = sink.kernel_names.emplace(name, sink.writer.intern(demangle(name))).first;
  return it->second;
}

const RowSink::ApiName& api_name(const CuptiApi& api, RowSink& sink, CUpti_CallbackDomain domain, uint32_t cbid) {
  uint64_t key = (uint64_t{static_cast<uint32_t>(domain)} << 32) | cbid;
  auto it = sink.api_names.find(key);
  if (it != sink.api_names.end()) return it->second;
  const char* name = nullptr;
  std::string s;
  bool noisy = false;
  if (api.get_callback_name && api.get_callback_name(domain, cbid, &name) == CUPTI_SUCCESS && name) {
    s = name;
    noisy = is_noisy_api(name);
  }
  else
    s = (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver_api_" : "runtime_api_") + std::to_string(cbid);
  // CUPTI names carry a version suffix (cudaMalloc_v3020); users know the plain name.
  if (auto pos = s.find("_v"); pos != std::string::npos && pos + 2 < s.size() &&
                               std::isdigit(static_cast<unsigned char>(s[pos + 2])))
    s.erase(pos);
  return sink.api_names.emplace(key, RowSink::ApiName{std::move(s), noisy}).first->second;
}

void on_kernel(const CUpti_ActivityKernel10& k, RowSink& sink) {
  if (!sink.in_window(k.start)) return;
  store::KernelRow r;
  r.pid = sink.pid;
  r.device = k.deviceId;
  r.context = k.contextId;
  r.stream = k.streamId;
  r.correlation = sink.correlation(k.correlationId);
  r.start = sink.rel(k.start);
  r.end = sink.rel(k.end);
  r.name_id = kernel_name_id(sink, k.name);
  r.grid_x = k.gridX;
  r.grid_y = k.gridY;
  r.grid_z = k.gridZ;
  r.block_x = k.blockX;
  r.block_y = k.blockY;
  r.block_z = k.blockZ;
  r.registers = k.registersPerThread;
  r.static_smem = k.staticSharedMemory;
  r.dynamic_smem = k.dynamicSharedMemory;
  r.graph_id = graph_or_null(k.graphId);
  r.graph_node_id = k.graphId ? static_cast<int64_t>(k.graphNodeId) : kNull;
  sink.writer.add(r);
  sink.count("records_kernel");
}

// Memcpy6 and MemcpyPtoP4 share these fields; peer copies add the two devices.
template <class Record>
store::MemcpyRow memcpy_row(const Record& m, RowSink& sink) {
  store::MemcpyRow r;
  r.pid = sink.pid;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = sink.correlation(m.correlationId);
  r.start = sink.rel(m.start);
  r.end = sink.rel(m.end);
  r.copy_kind = m.copyKind;
  r.src_kind = m.srcKind;
  r.dst_kind = m.dstKind;
  r.bytes = static_cast<int64_t>(m.bytes);
  r.graph_id = graph_or_null(m.graphId);
  return r;
}

void on_memcpy(const CUpti_ActivityMemcpy6& m, RowSink& sink) {
  if (!sink.in_window(m.start)) return;
  sink.writer.add(memcpy_row(m, sink));
  sink.count("records_memcpy");
}

void on_peer_memcpy(const CUpti_ActivityMemcpyPtoP4& m, RowSink& sink) {
  if (!sink.in_window(m.start)) return;
  store::MemcpyRow r = memcpy_row(m, sink);
  r.src_device = m.srcDeviceId;
  r.dst_device = m.dstDeviceId;
  sink.writer.add(r);
  sink.count("records_memcpy");
}

void on_memset(const CUpti_ActivityMemset4& m, RowSink& sink) {
  if (!sink.in_window(m.start)) return;
  store::MemsetRow r;
  r.pid = sink.pid;
  r.device = m.deviceId;
  r.context = m.contextId;
  r.stream = m.streamId;
  r.correlation = sink.correlation(m.correlationId);
  r.start = sink.rel(m.start);
  r.end = sink.rel(m.end);
  r.bytes = static_cast<int64_t>(m.bytes);
  r.value = m.value;
  r.mem_kind = m.memoryKind;
  r.graph_id = graph_or_null(m.graphId);
  sink.writer.add(r);
  sink.count("records_memset");
}

void on_api(const CuptiApi& api, const CUpti_ActivityAPI& a, CUpti_CallbackDomain domain, RowSink& sink) {
  if (!sink.in_window(a.start)) return;
  const RowSink::ApiName& name = api_name(api, sink, domain, a.cbid);
  if (name.noisy) {
    // Recorded between an enable and the filter that follows it.
    sink.count("filtered_noisy_api");
    return;
  }
  store::ApiCallRow r;
  r.pid = sink.pid;
  r.tid = a.threadId;
  r.domain = domain == CUPTI_CB_DOMAIN_DRIVER_API ? schema::api_domain::driver : schema::api_domain::runtime;
  r.cbid = a.cbid;
  r.name = name.name;
  r.start = sink.rel(a.start);
  r.end = sink.rel(a.end);
  sink.note_api_correlation(a.threadId, a.correlationId);
  r.correlation = sink.correlation(a.correlationId);
  r.return_code = a.returnValue;
  sink.writer.add(r);
  sink.api_tids.emplace(a.threadId, true);
  sink.count(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "records_driver_api" : "records_runtime_api");
}

uint64_t event_key(uint32_t context, uint32_t event) { return uint64_t{context} << 32 | event; }

void on_cuda_event(const CUpti_ActivityCudaEvent2& e, RowSink& sink) {
  RowSink::EventRecord& r = sink.event_records[event_key(e.contextId, e.eventId)];
  r.sync_id = e.cudaEventSyncId;
  r.correlation = sink.correlation(e.correlationId);
  r.stream = e.streamId;
  sink.count("records_cuda_event");
}

void on_sync(const CUpti_ActivitySynchronization2& s, RowSink& sink) {
  if (!sink.in_window(s.start)) return;
  store::SyncRow r;
  r.pid = sink.pid;
  r.type = s.type;
  r.context = s.contextId;
  // CUPTI uses all-ones for "not applicable".
  r.stream = s.streamId == UINT32_MAX ? kNull : int64_t{s.streamId};
  r.event = s.cudaEventId == UINT32_MAX ? kNull : int64_t{s.cudaEventId};
  r.start = sink.rel(s.start);
  r.end = sink.rel(s.end);
  r.correlation = sink.correlation(s.correlationId);
  if ((s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT ||
       s.type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE) &&
      s.cudaEventId != UINT32_MAX) {
    // The record waited for (by a stream, or by the host): the event's latest,
    // when CUPTI's sync ids agree (a record made after the wait, decoded
    // first, would not be it).
    auto it = sink.event_records.find(event_key(s.contextId, s.cudaEventId));
    if (it != sink.event_records.end() &&
        (s.cudaEventSyncId == it->second.sync_id || s.cudaEventSyncId == UINT64_MAX || it->second.sync_id == UINT64_MAX)) {
      r.wait_stream = it->second.stream;
      r.event_correlation = it->second.correlation;
    } else {
      sink.count("sync_waits_unlinked");
    }
  }
  sink.writer.add(r);
  sink.count("records_sync");
}

void on_memory(const CUpti_ActivityMemory4& m, RowSink& sink) {
  bool alloc = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  bool release = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  if (!alloc && !release) return;
  int64_t bytes = static_cast<int64_t>(m.bytes);
  int64_t device = m.deviceId;
  int64_t& used = sink.device_memory[device];
  if (m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) used += alloc ? bytes : -bytes;
  if (!sink.in_window(m.timestamp)) return;
  store::MemoryEventRow r;
  r.pid = sink.pid;
  r.device = device;
  r.ts = sink.rel(m.timestamp);
  r.op = alloc ? schema::memory_op::alloc : schema::memory_op::free;
  r.source = schema::memory_source::cuda;
  r.mem_kind = m.memoryKind;
  r.address = static_cast<int64_t>(m.address);
  r.bytes = bytes;
  r.stream = m.isAsync ? int64_t{m.streamId} : kNull;
  r.correlation = sink.correlation(m.correlationId);
  sink.writer.add(r);
  if (m.memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
    store::CounterRow c;
    c.pid = sink.pid;
    c.device = device;
    c.name = "gpu_memory_used";
    c.ts = r.ts;
    c.value = static_cast<double>(used);
    sink.writer.add(c);
  }
  sink.count("records_memory");
}

void on_device(const CUpti_ActivityDevice5& d, RowSink& sink) {
  store::DeviceRow r;
  r.id = d.id;
  r.name = d.name ? d.name : "";
  static const char* hex = "0123456789abcdef";
  for (unsigned char b : d.uuid.bytes) {
    r.uuid += hex[b >> 4];
    r.uuid += hex[b & 15];
  }
  r.sm_count = d.numMultiprocessors;
  r.total_memory = static_cast<int64_t>(d.globalMemorySize);
  r.compute_major = d.computeCapabilityMajor;
  r.compute_minor = d.computeCapabilityMinor;
  r.memory_bandwidth = static_cast<int64_t>(d.globalMemoryBandwidth) * 1000;  // CUPTI: KB/s
  r.core_clock_khz = d.coreClockRate;
  sink.writer.put(r);
  sink.count("records_device");
}

void on_external_correlation(const CUpti_ActivityExternalCorrelation& e, RowSink& sink) {
  store::ExternalCorrelationRow r;
  r.pid = sink.pid;
  r.correlation = sink.correlation(e.correlationId);
  r.external_id = static_cast<int64_t>(e.externalId);
  sink.writer.put(r);
  sink.count("records_external_correlation");
}

// What CUPTI says an overhead record was: CUPTI's own work, or the driver's
// that CUPTI saw (JIT, module and lazy function loading, command-buffer waits).
std::string_view overhead_name(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "CUDA overhead: JIT compilation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI overhead: buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI overhead: instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI overhead: resources";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING: return "CUDA overhead: module loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "CUDA overhead: lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "CUDA overhead: command buffer full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "CUPTI overhead: activity buffer request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT: return "CUPTI overhead: UVM activity init";
    default: return "CUPTI overhead: other";
  }
}

// A range on the thread the overhead hit; overhead of the process, a device,
// a context or a stream goes on the process's main thread. `version`: the
// loaded CUPTI's (cuptiGetVersion); from CUDA 13 on a record carries extra
// data for command-buffer waits, which CUPTI leaves to its client to free.
void on_overhead(const CUpti_ActivityOverhead3& o, uint32_t version, RowSink& sink) {
  if (version >= 130000 && o.overheadData) std::free(o.overheadData);
  if (o.start == 0 && o.end == 0) {
    sink.count("records_overhead_untimed");
    return;
  }
  if (!sink.in_window(o.start)) return;
  const bool thread = o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD;
  sink.add_tracer_overhead(thread ? int64_t{o.objectId.pt.threadId} : sink.pid, overhead_name(o.overheadKind), o.start,
                           o.end);
  if (thread) sink.api_tids.emplace(o.objectId.pt.threadId, true);
  sink.count("records_overhead");
}

}  // namespace

size_t decode_activity_buffer(const CuptiApi& api, uint8_t* buffer, size_t valid, RowSink& sink) {
  size_t n = 0;
  uint32_t version = 0;
  if (api.get_version) api.get_version(&version);
  CUpti_Activity* rec = nullptr;
  for (;;) {
    CUptiResult rc = api.get_next_record(buffer, valid, &rec);
    if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (rc != CUPTI_SUCCESS) {
      sink.count("truncated_buffers");
      break;
    }
    ++n;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        on_kernel(*reinterpret_cast<CUpti_ActivityKernel10*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        on_memcpy(*reinterpret_cast<CUpti_ActivityMemcpy6*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        on_peer_memcpy(*reinterpret_cast<CUpti_ActivityMemcpyPtoP4*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        on_memset(*reinterpret_cast<CUpti_ActivityMemset4*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
        on_api(api, *reinterpret_cast<CUpti_ActivityAPI*>(rec), CUPTI_CB_DOMAIN_RUNTIME_API, sink);
        break;
      case CUPTI_ACTIVITY_KIND_DRIVER:
        on_api(api, *reinterpret_cast<CUpti_ActivityAPI*>(rec), CUPTI_CB_DOMAIN_DRIVER_API, sink);
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        on_sync(*reinterpret_cast<CUpti_ActivitySynchronization2*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT:
        on_cuda_event(*reinterpret_cast<CUpti_ActivityCudaEvent2*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_MEMORY2:
        on_memory(*reinterpret_cast<CUpti_ActivityMemory4*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        on_device(*reinterpret_cast<CUpti_ActivityDevice5*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        on_external_correlation(*reinterpret_cast<CUpti_ActivityExternalCorrelation*>(rec), sink);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        on_overhead(*reinterpret_cast<CUpti_ActivityOverhead3*>(rec), version, sink);
        break;
      case CUPTI_ACTIVITY_KIND_CONTEXT:
        sink.count("records_other");
        break;
      default:
        sink.count("records_unknown_kind");
        break;
    }
  }
  return n;
}

}  // namespace gpuscope::collector
