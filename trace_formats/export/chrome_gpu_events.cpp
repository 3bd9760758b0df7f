// Device-side events of the Chrome export: kernels, copies, sets and syncs,
// each GPU event on pid = device, tid = stream as Kineto writes them, with an
// ac2g flow from the launching API call.
#include "trace_formats/export/chrome_writer.h"

#include <algorithm>
#include <cmath>

#include "trace_formats/common/text.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/import/kineto_names.h"

namespace gpuscope::formats {

using namespace store::rec;  // the row structs of records.h: Kernel, Op, Step, ...

void ChromeWriter::on(const Kernel& k) {
  int64_t pid = k.pid, device = k.device_or_zero(), stream = k.stream_or_zero(), corr = k.correlation_or_zero();
  int64_t start = k.start_or_zero();
  const CorrelationMap::Entry* c = m_.correlation(k.pid, k.correlation);
  stream_name(device, stream);
  const std::string& name = m_.json_string(k.name_id_or_zero());
  gpu_event_head("kernel", name, device, stream, start, k.end_or_zero(), c, k.context_or_zero(), corr);
  int_arg("registers per thread", k.registers_or_zero());
  int64_t static_smem = k.static_smem_or_zero(), dynamic_smem = k.dynamic_smem_or_zero();
  int_arg("shared memory", static_smem + dynamic_smem);
  int64_t gx = k.grid_x_or_zero(), gy = k.grid_y_or_zero(), gz = k.grid_z_or_zero();
  int64_t bx = k.block_x_or_zero(), by = k.block_y_or_zero(), bz = k.block_z_or_zero();
  if (device != sm_device_) {
    sm_device_ = device;
    sms_ = m_.sm_count(device);
  }
  if (sms_ > 0) {
    double per_sm = double(gx) * double(gy) * double(gz) / double(sms_);
    key("blocks per SM");
    o_.put_double(per_sm);
    key("warps per SM");
    o_.put_double(per_sm * std::ceil(double(bx) * double(by) * double(bz) / 32.0));
  }
  key("grid");
  o_.put('[');
  o_.put_int(gx);
  o_.put(',');
  o_.put_int(gy);
  o_.put(',');
  o_.put_int(gz);
  o_.put(']');
  key("block");
  o_.put('[');
  o_.put_int(bx);
  o_.put(',');
  o_.put_int(by);
  o_.put(',');
  o_.put_int(bz);
  o_.put(']');
  // Kineto sums the two; keep them apart when it matters for re-import.
  if (dynamic_smem != 0) {
    int_arg("static shared memory", static_smem);
    int_arg("dynamic shared memory", dynamic_smem);
  }
  if (!k.null(Kernel::kGraphId)) int_arg("graph id", k.graph_id);
  if (!k.null(Kernel::kGraphNodeId)) int_arg("graph node id", k.graph_node_id);
  gpu_event_tail(c, pid, corr, device, stream, start, k.end_or_zero());
}

void ChromeWriter::on(const Memcpy& m) {
  int64_t pid = m.pid, device = m.device_or_zero(), stream = m.stream_or_zero(), corr = m.correlation_or_zero();
  int64_t start = m.start_or_zero(), end = m.end_or_zero(), bytes = m.bytes_or_zero();
  const CorrelationMap::Entry* c = m_.correlation(m.pid, m.correlation);
  stream_name(device, stream);
  int64_t kind = m.copy_kind_or_zero(), src = m.src_kind_or_zero(), dst = m.dst_kind_or_zero();
  const std::string& name = memcpy_names_.get(kind, src, dst, [&] { return memcpy_name(kind, src, dst); });
  gpu_event_head("gpu_memcpy", name, device, stream, start, end, c, m.context_or_zero(), corr);
  int_arg("bytes", bytes);
  if (end > start) {
    key("memory bandwidth (GB/s)");
    o_.put_double(double(bytes) / double(span_ns(start, end)));  // bytes per ns = GB/s
  }
  if (!m.null(Memcpy::kSrcDevice)) int_arg("src device", m.src_device);
  if (!m.null(Memcpy::kDstDevice)) int_arg("dst device", m.dst_device);
  if (!m.null(Memcpy::kGraphId)) int_arg("graph id", m.graph_id);
  gpu_event_tail(c, pid, corr, device, stream, start, end);
}

void ChromeWriter::on(const Memset& m) {
  int64_t pid = m.pid, device = m.device_or_zero(), stream = m.stream_or_zero(), corr = m.correlation_or_zero();
  int64_t start = m.start_or_zero(), end = m.end_or_zero(), bytes = m.bytes_or_zero();
  const CorrelationMap::Entry* c = m_.correlation(m.pid, m.correlation);
  stream_name(device, stream);
  int64_t kind = m.mem_kind_or_zero();
  const std::string& name = memset_names_.get(kind, 0, 0, [&] { return memset_name(kind); });
  gpu_event_head("gpu_memset", name, device, stream, start, end, c, m.context_or_zero(), corr);
  int_arg("bytes", bytes);
  if (end > start) {
    key("memory bandwidth (GB/s)");
    o_.put_double(double(bytes) / double(span_ns(start, end)));
  }
  if (!m.null(Memset::kGraphId)) int_arg("graph id", m.graph_id);
  gpu_event_tail(c, pid, corr, device, stream, start, end);
}

void ChromeWriter::on(const Sync& s) {
  int64_t device = m_.context_device(s.pid_or_zero(), s.context_or_zero());
  int64_t stream = s.stream_or_zero();
  stream_name(device, stream);
  std::string_view name = sync_name(s.type_or_zero());
  begin('X', name.size());
  o_.lit(",\"cat\":\"cuda_sync\",\"name\":\"");
  o_.put(name);
  o_.put('"');
  gpu_span(device, stream, s.start_or_zero(), s.end_or_zero());
  o_.lit(",\"args\":{\"device\":");
  o_.put_int(device);
  int_arg("context", s.context_or_zero());
  int_arg("stream", s.null(Sync::kStream) ? -1 : s.stream);
  int_arg("correlation", s.correlation_or_zero());
  if (!s.null(Sync::kEvent)) int_arg("event", s.event);
  // What a stream wait waited for, as Kineto names it (HTA's critical path follows these).
  if (!s.null(Sync::kWaitStream)) int_arg("wait_on_stream", s.wait_stream);
  if (!s.null(Sync::kEventCorrelation)) int_arg("wait_on_cuda_event_record_corr_id", s.event_correlation);
  o_.put('}');
  end_event();
  // An event sync's arrow, from the GPU work the event recorded to the
  // sync's last nanosecond, when the wait returned (the work may have
  // started after the wait did).
  const EventSyncs::Work* w = s.type_or_zero() == schema::sync_type::event_synchronize
                                  ? event_syncs_.work_of(s.pid_or_zero(), s.correlation_or_zero())
                                  : nullptr;
  if (w) {
    const uint64_t id = m_.flow_id(s.pid_or_zero(), s.correlation_or_zero());
    sync_flow(true, id, w->device, w->stream, w->ts);
    const int64_t at = hta_start(s.start_or_zero(), s.end_or_zero());
    sync_flow(false, id, device, stream, std::max(at, at + span_ns(s.start_or_zero(), s.end_or_zero()) - 1));
  }
  row_done();
}

}  // namespace gpuscope::formats
