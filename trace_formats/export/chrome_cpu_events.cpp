// Host-side events of the Chrome export: ops, annotations, API calls, steps,
// memory and counters.
#include <map>

#include "export/chrome_writer.h"
#include "export/json_text.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

void ChromeWriter::ops() {
  auto q = m_.reader().query(
      "SELECT pid, tid, name_id, start, \"end\", seq_nr, shapes_id, dtypes_id, external_id FROM op" + m_.where_pid());
  while (q.step()) {
    begin("X");
    buf_ += ",\"cat\":\"cpu_op\",\"name\":";
    buf_ += m_.json_string(q.int64(2));
    span(q.int64(0), q.int64(1), q.int64(3), q.int64(4));
    buf_ += ",\"args\":{";
    size_t mark = buf_.size();
    if (!q.is_null(8)) int_arg("External id", q.int64(8));
    if (!q.is_null(5)) int_arg("Sequence number", q.int64(5));
    if (!q.is_null(6)) {
      key("Input Dims");
      buf_ += m_.json_value(q.int64(6));
    }
    if (!q.is_null(7)) {
      key("Input type");
      buf_ += m_.json_value(q.int64(7));
    }
    // int_arg/key start with a comma; the first member must not.
    if (buf_.size() > mark) buf_.erase(mark, 1);
    buf_ += '}';
    end_event();
    row_done();
  }
}

void ChromeWriter::ranges() {
  auto q = m_.reader().query(
      "SELECT r.pid, r.tid, r.source, r.kind, r.domain_id, r.name_id, r.start, r.\"end\", r.color, r.category, "
      "d.value FROM range r LEFT JOIN string d ON d.id = r.domain_id" + m_.where_pid("r."));
  while (q.step()) {
    int64_t pid = q.int64(0), tid = q.int64(1), source = q.int64(2), kind = q.int64(3);
    int64_t start = q.int64(6);
    bool unclosed = q.is_null(7);
    int64_t end = unclosed ? start : q.int64(7);
    std::string_view domain = q.is_null(10) ? std::string_view() : q.text(10);
    if (domain == kGpuAnnotationDomain) {
      int64_t device = q.is_null(9) ? 0 : q.int64(9);
      stream_name(device, tid);
      begin("X");
      buf_ += ",\"cat\":\"gpu_user_annotation\",\"name\":";
      buf_ += m_.json_string(q.int64(5));
      span(device, tid, start, end);
      buf_ += ",\"args\":{\"device\":";
      append_int(buf_, device);
      int_arg("stream", tid);
      buf_ += '}';
      end_event();
      row_done();
      continue;
    }
    if (kind == 3) {
      begin("i");
      buf_ += ",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":";
      buf_ += m_.json_string(q.int64(5));
      where(pid, tid, start);
    } else {
      begin("X");
      buf_ += source == kRangePython ? ",\"cat\":\"python_function\",\"name\":" : ",\"cat\":\"user_annotation\",\"name\":";
      buf_ += m_.json_string(q.int64(5));
      span(pid, tid, start, end);
    }
    buf_ += ",\"args\":{";
    size_t mark = buf_.size();
    if (source == kRangeNvtx) {
      key("source");
      buf_ += "\"nvtx\"";
    }
    if (!domain.empty()) {
      key("domain");
      buf_ += m_.json_string(q.int64(4));
    }
    if (kind == 2) {
      key("range kind");
      buf_ += "\"start_end\"";
    }
    if (!q.is_null(8)) int_arg("color", q.int64(8));
    if (!q.is_null(9)) int_arg("category", q.int64(9));
    if (unclosed && kind != 3) {
      key("unclosed");
      buf_ += "true";
    }
    if (buf_.size() > mark) buf_.erase(mark, 1);
    buf_ += '}';
    end_event();
    row_done();
  }
}

void ChromeWriter::api_calls() {
  m_.ensure_gpu_correlations();
  auto q = m_.reader().query(
      "SELECT a.pid, a.tid, a.domain, a.cbid, a.name_id, a.start, a.\"end\", a.correlation, a.return_code, "
      "x.external_id, g.pid IS NOT NULL FROM api_call a LEFT JOIN external_correlation x "
      "ON x.pid = a.pid AND x.correlation = a.correlation LEFT JOIN temp.gpu_corr g "
      "ON g.pid = a.pid AND g.correlation = a.correlation" + m_.where_pid("a."));
  while (q.step()) {
    begin("X");
    buf_ += q.int64(2) == 2 ? ",\"cat\":\"cuda_driver\",\"name\":" : ",\"cat\":\"cuda_runtime\",\"name\":";
    buf_ += m_.json_string(q.int64(4));
    span(q.int64(0), q.int64(1), q.int64(5), q.int64(6));
    buf_ += ",\"args\":{\"cbid\":";
    append_int(buf_, q.int64(3));
    int_arg("correlation", q.int64(7));
    if (!q.is_null(9)) int_arg("External id", q.int64(9));
    if (q.int64(8) != 0) int_arg("return code", q.int64(8));
    buf_ += '}';
    end_event();
    // The launch -> GPU arrow starts here once; each GPU activity ends one.
    if (q.int64(10)) flow("s", m_.flow_id(q.int64(0), q.int64(7)), q.int64(0), q.int64(1), q.int64(5));
    row_done();
  }
}

void ChromeWriter::steps() {
  // Steps already present as ProfilerStep#N ranges were written with the
  // ranges; the others (optimizer or NVTX boundaries) get a ProfilerStep#N
  // event so that TensorBoard and HTA see them, marked so import keeps them
  // as steps only.
  std::map<int64_t, bool> has_ranges;
  auto r = m_.reader().query("SELECT DISTINCT pid FROM range WHERE source=5" + m_.and_pid());
  while (r.step()) has_ranges[r.int64(0)] = true;
  std::map<int64_t, int64_t> main_tid;
  auto busiest = m_.reader().query("SELECT pid, tid, count(*) AS n FROM op" + m_.where_pid() +
                                   " GROUP BY pid, tid ORDER BY n");
  while (busiest.step()) main_tid[busiest.int64(0)] = busiest.int64(1);  // last = busiest
  auto q = m_.reader().query("SELECT pid, number, start, \"end\", source FROM step" + m_.where_pid() +
                             " ORDER BY pid, start");
  while (q.step()) {
    int64_t pid = q.int64(0);
    if (has_ranges.count(pid)) continue;
    auto it = main_tid.find(pid);
    begin("X");
    buf_ += ",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#";
    append_int(buf_, q.int64(1));
    buf_ += '"';
    span(pid, it == main_tid.end() ? pid : it->second, q.int64(2), q.int64(3));
    buf_ += ",\"args\":{\"step source\":\"";
    buf_ += step_source_name(q.int64(4));
    buf_ += "\"}";
    end_event();
  }
}

void ChromeWriter::memory() {
  auto q = m_.reader().query(
      "SELECT pid, device, ts, op, source, address, bytes, stream, correlation, total_allocated, total_reserved "
      "FROM memory_event" + m_.where_pid());
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1);
    begin("i");
    // Only the torch allocator's events are "[memory]": TensorBoard draws its
    // memory curves from their totals, which CUDA-level events lack.
    buf_ += q.int64(4) == 1 ? ",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[cuda memory]\""
                            : ",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\"";
    where(pid, pid, q.int64(2));
    buf_ += ",\"args\":{\"Device Type\":";
    buf_ += device >= 0 ? '1' : '0';
    int_arg("Device Id", device);
    int_arg("Addr", q.int64(5));
    int_arg("Bytes", q.int64(3) == 2 ? -q.int64(6) : q.int64(6));
    if (!q.is_null(9)) int_arg("Total Allocated", q.int64(9));
    if (!q.is_null(10)) int_arg("Total Reserved", q.int64(10));
    if (!q.is_null(7)) int_arg("stream", q.int64(7));
    if (!q.is_null(8)) int_arg("correlation", q.int64(8));
    buf_ += '}';
    end_event();
    row_done();
  }
}

void ChromeWriter::counters() {
  auto q = m_.reader().query("SELECT pid, device, name_id, ts, value FROM counter" + m_.where_pid());
  while (q.step()) {
    begin("C");
    buf_ += ",\"name\":";
    buf_ += m_.json_string(q.int64(2));
    // Device counters sit on the GPU's row, host counters on the process.
    int64_t pid = q.is_null(1) ? q.int64(0) : q.int64(1);
    buf_ += ",\"pid\":";
    append_int(buf_, pid);
    buf_ += ",\"ts\":";
    append_us(buf_, q.int64(3));
    buf_ += ",\"args\":{\"value\":";
    append_double(buf_, q.real(4));
    buf_ += "}";
    end_event();
    row_done();
  }
}

}  // namespace gpuscope::formats
