// Device-side events of the Chrome export: kernels, copies, sets and syncs,
// each GPU event on pid = device, tid = stream as Kineto writes them, with an
// ac2g flow from the launching API call.
#include "export/chrome_writer.h"

#include <cmath>

#include "common/text.h"
#include "export/json_text.h"
#include "schema/schema.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

void ChromeWriter::kernels() {
  auto q = m_.reader().query(
      "SELECT pid, device, context, stream, correlation, start, \"end\", name_id, grid_x, grid_y, grid_z, block_x, "
      "block_y, block_z, registers, static_smem, dynamic_smem, graph_id, graph_node_id FROM kernel" + m_.where_pid());
  int64_t sm_device = INT64_MIN, sms = 0;
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4), start = q.int64(5);
    const CorrelationMap::Entry* c = m_.correlation(q, 0, pid, 4, corr);
    stream_name(device, stream);
    const std::string& name = m_.json_string(q.int64(7));
    gpu_event_head("kernel", name, device, stream, start, q.int64(6), c, q.int64(2), corr);
    int_arg("registers per thread", q.int64(14));
    int64_t static_smem = q.int64(15), dynamic_smem = q.int64(16);
    int_arg("shared memory", static_smem + dynamic_smem);
    int64_t gx = q.int64(8), gy = q.int64(9), gz = q.int64(10), bx = q.int64(11), by = q.int64(12), bz = q.int64(13);
    if (device != sm_device) {
      sm_device = device;
      sms = m_.sm_count(device);
    }
    if (sms > 0) {
      double per_sm = double(gx) * double(gy) * double(gz) / double(sms);
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
    if (!q.is_null(17)) int_arg("graph id", q.int64(17));
    if (!q.is_null(18)) int_arg("graph node id", q.int64(18));
    o_.put('}');
    end_event();
    if (c && c->api) flow(false, m_.flow_id(pid, corr), device, stream, start);
    row_done();
  }
}

namespace {

// GPU rows of one table share a few names: escape each once.
struct NameCache {
  int64_t a = INT64_MIN, b = INT64_MIN, c = INT64_MIN;
  std::string json;
  template <typename F>
  const std::string& get(int64_t a2, int64_t b2, int64_t c2, F&& name) {
    if (a2 != a || b2 != b || c2 != c) {
      a = a2;
      b = b2;
      c = c2;
      json.clear();
      append_json_string(json, name());
    }
    return json;
  }
};

}  // namespace

void ChromeWriter::memcpys() {
  auto q = m_.reader().query(
      "SELECT pid, device, context, stream, correlation, start, \"end\", copy_kind, src_kind, dst_kind, bytes, "
      "src_device, dst_device, graph_id FROM memcpy" + m_.where_pid());
  NameCache names;
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4);
    int64_t start = q.int64(5), end = q.int64(6), bytes = q.int64(10);
    const CorrelationMap::Entry* c = m_.correlation(q, 0, pid, 4, corr);
    stream_name(device, stream);
    int64_t kind = q.int64(7), src = q.int64(8), dst = q.int64(9);
    const std::string& name = names.get(kind, src, dst, [&] { return memcpy_name(kind, src, dst); });
    gpu_event_head("gpu_memcpy", name, device, stream, start, end, c, q.int64(2), corr);
    int_arg("bytes", bytes);
    if (end > start) {
      key("memory bandwidth (GB/s)");
      o_.put_double(double(bytes) / double(span_ns(start, end)));  // bytes per ns = GB/s
    }
    if (!q.is_null(11)) int_arg("src device", q.int64(11));
    if (!q.is_null(12)) int_arg("dst device", q.int64(12));
    if (!q.is_null(13)) int_arg("graph id", q.int64(13));
    o_.put('}');
    end_event();
    if (c && c->api) flow(false, m_.flow_id(pid, corr), device, stream, start);
    row_done();
  }
}

void ChromeWriter::memsets() {
  auto q = m_.reader().query(
      "SELECT pid, device, context, stream, correlation, start, \"end\", bytes, value, mem_kind, graph_id "
      "FROM memset" + m_.where_pid());
  NameCache names;
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4);
    int64_t start = q.int64(5), end = q.int64(6), bytes = q.int64(7);
    const CorrelationMap::Entry* c = m_.correlation(q, 0, pid, 4, corr);
    stream_name(device, stream);
    int64_t kind = q.int64(9);
    const std::string& name = names.get(kind, 0, 0, [&] { return memset_name(kind); });
    gpu_event_head("gpu_memset", name, device, stream, start, end, c, q.int64(2), corr);
    int_arg("bytes", bytes);
    if (end > start) {
      key("memory bandwidth (GB/s)");
      o_.put_double(double(bytes) / double(span_ns(start, end)));
    }
    if (!q.is_null(10)) int_arg("graph id", q.int64(10));
    o_.put('}');
    end_event();
    if (c && c->api) flow(false, m_.flow_id(pid, corr), device, stream, start);
    row_done();
  }
}

void ChromeWriter::syncs() {
  auto q = m_.reader().query(
      "SELECT pid, tid, type, context, stream, event, start, \"end\", correlation, " +
      std::string(schema::has_column("sync", "wait_stream", m_.reader().schema_version())
                      ? "wait_stream, event_correlation" : "NULL, NULL") +
      " FROM sync" + m_.where_pid());
  while (q.step()) {
    int64_t device = m_.context_device(q.int64(0), q.int64(3));
    int64_t stream = q.is_null(4) ? 0 : q.int64(4);
    stream_name(device, stream);
    std::string_view name = sync_name(q.int64(2));
    begin('X', name.size());
    o_.lit(",\"cat\":\"cuda_sync\",\"name\":\"");
    o_.put(name);
    o_.put('"');
    span(device, stream, q.int64(6), q.int64(7));
    o_.lit(",\"args\":{\"device\":");
    o_.put_int(device);
    int_arg("context", q.int64(3));
    int_arg("stream", q.is_null(4) ? -1 : q.int64(4));
    int_arg("correlation", q.int64(8));
    if (!q.is_null(5)) int_arg("event", q.int64(5));
    // What a stream wait waited for, as Kineto names it (HTA's critical path follows these).
    if (!q.is_null(9)) int_arg("wait_on_stream", q.int64(9));
    if (!q.is_null(10)) int_arg("wait_on_cuda_event_record_corr_id", q.int64(10));
    o_.put('}');
    end_event();
    row_done();
  }
}

}  // namespace gpuscope::formats
