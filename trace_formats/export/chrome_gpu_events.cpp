// Device-side events of the Chrome export: kernels, copies, sets and syncs,
// each GPU event on pid = device, tid = stream as Kineto writes them, with an
// ac2g flow from the launching API call.
#include "export/chrome_writer.h"
#include "export/json_text.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

namespace {

// Columns shared by the three GPU queries, after the table's own ones:
// external id, then the launching call's tid and start.
const char* kGpuJoins =
    " LEFT JOIN external_correlation x ON x.pid = g.pid AND x.correlation = g.correlation"
    " LEFT JOIN temp.api_corr c ON c.pid = g.pid AND c.correlation = g.correlation";

}  // namespace

void ChromeWriter::kernels() {
  m_.ensure_api_correlations();
  auto q = m_.reader().query(
      "SELECT g.pid, g.device, g.context, g.stream, g.correlation, g.start, g.\"end\", g.name_id, g.grid_x, g.grid_y, "
      "g.grid_z, g.block_x, g.block_y, g.block_z, g.registers, g.static_smem, g.dynamic_smem, g.graph_id, "
      "g.graph_node_id, x.external_id, c.tid, c.start FROM kernel g" + std::string(kGpuJoins) + m_.where_pid("g."));
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4), start = q.int64(5);
    stream_name(device, stream);
    begin("X");
    buf_ += ",\"cat\":\"kernel\",\"name\":";
    buf_ += m_.json_string(q.int64(7));
    span(device, stream, start, q.int64(6));
    buf_ += ",\"args\":{";
    size_t mark = buf_.size();
    if (!q.is_null(19)) int_arg("External id", q.int64(19));
    int_arg("device", device);
    int_arg("context", q.int64(2));
    int_arg("stream", stream);
    int_arg("correlation", corr);
    int_arg("registers per thread", q.int64(14));
    int64_t static_smem = q.int64(15), dynamic_smem = q.int64(16);
    int_arg("shared memory", static_smem + dynamic_smem);
    int64_t blocks = q.int64(8) * q.int64(9) * q.int64(10);
    int64_t threads = q.int64(11) * q.int64(12) * q.int64(13);
    if (int64_t sms = m_.sm_count(device); sms > 0) {
      double per_sm = double(blocks) / double(sms);
      key("blocks per SM");
      append_double(buf_, per_sm);
      key("warps per SM");
      append_double(buf_, per_sm * double((threads + 31) / 32));
    }
    key("grid");
    buf_ += '[';
    append_int(buf_, q.int64(8));
    buf_ += ',';
    append_int(buf_, q.int64(9));
    buf_ += ',';
    append_int(buf_, q.int64(10));
    buf_ += "]";
    key("block");
    buf_ += '[';
    append_int(buf_, q.int64(11));
    buf_ += ',';
    append_int(buf_, q.int64(12));
    buf_ += ',';
    append_int(buf_, q.int64(13));
    buf_ += ']';
    // Kineto sums the two; keep them apart when it matters for re-import.
    if (dynamic_smem != 0) {
      int_arg("static shared memory", static_smem);
      int_arg("dynamic shared memory", dynamic_smem);
    }
    if (!q.is_null(17)) int_arg("graph id", q.int64(17));
    if (!q.is_null(18)) int_arg("graph node id", q.int64(18));
    buf_.erase(mark, 1);
    buf_ += '}';
    end_event();
    if (!q.is_null(20)) {
      flow("f", m_.flow_id(pid, corr), device, stream, start);
    }
    row_done();
  }
}

void ChromeWriter::memcpys() {
  m_.ensure_api_correlations();
  auto q = m_.reader().query(
      "SELECT g.pid, g.device, g.context, g.stream, g.correlation, g.start, g.\"end\", g.copy_kind, g.src_kind, "
      "g.dst_kind, g.bytes, g.src_device, g.dst_device, g.graph_id, x.external_id, c.tid, c.start "
      "FROM memcpy g" + std::string(kGpuJoins) + m_.where_pid("g."));
  std::string name;
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4);
    int64_t start = q.int64(5), end = q.int64(6), bytes = q.int64(10);
    stream_name(device, stream);
    begin("X");
    buf_ += ",\"cat\":\"gpu_memcpy\",\"name\":";
    name = memcpy_name(q.int64(7), q.int64(8), q.int64(9));
    append_json_string(buf_, name);
    span(device, stream, start, end);
    buf_ += ",\"args\":{";
    size_t mark = buf_.size();
    if (!q.is_null(14)) int_arg("External id", q.int64(14));
    int_arg("device", device);
    int_arg("context", q.int64(2));
    int_arg("stream", stream);
    int_arg("correlation", corr);
    int_arg("bytes", bytes);
    if (end > start) {
      key("memory bandwidth (GB/s)");
      append_double(buf_, double(bytes) / double(end - start));  // bytes per ns = GB/s
    }
    if (!q.is_null(11)) int_arg("src device", q.int64(11));
    if (!q.is_null(12)) int_arg("dst device", q.int64(12));
    if (!q.is_null(13)) int_arg("graph id", q.int64(13));
    buf_.erase(mark, 1);
    buf_ += '}';
    end_event();
    if (!q.is_null(15)) {
      flow("f", m_.flow_id(pid, corr), device, stream, start);
    }
    row_done();
  }
}

void ChromeWriter::memsets() {
  m_.ensure_api_correlations();
  auto q = m_.reader().query(
      "SELECT g.pid, g.device, g.context, g.stream, g.correlation, g.start, g.\"end\", g.bytes, g.value, "
      "g.mem_kind, g.graph_id, x.external_id, c.tid, c.start FROM memset g" + std::string(kGpuJoins) +
      m_.where_pid("g."));
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1), stream = q.int64(3), corr = q.int64(4);
    int64_t start = q.int64(5), end = q.int64(6), bytes = q.int64(7);
    stream_name(device, stream);
    begin("X");
    buf_ += ",\"cat\":\"gpu_memset\",\"name\":";
    append_json_string(buf_, memset_name(q.int64(9)));
    span(device, stream, start, end);
    buf_ += ",\"args\":{";
    size_t mark = buf_.size();
    if (!q.is_null(11)) int_arg("External id", q.int64(11));
    int_arg("device", device);
    int_arg("context", q.int64(2));
    int_arg("stream", stream);
    int_arg("correlation", corr);
    int_arg("bytes", bytes);
    if (end > start) {
      key("memory bandwidth (GB/s)");
      append_double(buf_, double(bytes) / double(end - start));
    }
    if (!q.is_null(10)) int_arg("graph id", q.int64(10));
    buf_.erase(mark, 1);
    buf_ += '}';
    end_event();
    if (!q.is_null(12)) {
      flow("f", m_.flow_id(pid, corr), device, stream, start);
    }
    row_done();
  }
}

void ChromeWriter::syncs() {
  auto q = m_.reader().query(
      "SELECT pid, tid, type, context, stream, event, start, \"end\", correlation FROM sync" + m_.where_pid());
  while (q.step()) {
    int64_t device = m_.context_device(q.int64(0), q.int64(3));
    int64_t stream = q.is_null(4) ? 0 : q.int64(4);
    stream_name(device, stream);
    begin("X");
    buf_ += ",\"cat\":\"cuda_sync\",\"name\":\"";
    buf_ += sync_name(q.int64(2));
    buf_ += '"';
    span(device, stream, q.int64(6), q.int64(7));
    buf_ += ",\"args\":{\"device\":";
    append_int(buf_, device);
    int_arg("context", q.int64(3));
    int_arg("stream", q.is_null(4) ? -1 : q.int64(4));
    int_arg("correlation", q.int64(8));
    if (!q.is_null(5)) int_arg("event", q.int64(5));
    buf_ += '}';
    end_event();
    row_done();
  }
}

}  // namespace gpuscope::formats
