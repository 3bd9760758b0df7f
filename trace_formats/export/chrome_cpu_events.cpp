// Host-side events of the Chrome export: ops, annotations, API calls, steps,
// memory and counters.
#include <map>

#include "export/chrome_writer.h"
#include "export/json_text.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

namespace range_kind = schema::range_kind;

namespace {

bool is_gpuscope_mark(int64_t source) {
  return source == schema::range_source::sampling_window || source == schema::range_source::untraced_drained;
}

}  // namespace

void ChromeWriter::ops() {
  auto q = m_.reader().query(
      "SELECT pid, tid, name_id, start, \"end\", seq_nr, shapes_id, dtypes_id, external_id, id FROM op" +
      m_.where_pid());
  while (q.step()) {
    const std::string& name = m_.json_string(q.int64(2));
    const std::string* shapes = q.is_null(6) ? nullptr : &m_.json_value(q.int64(6));
    const std::string* dtypes = q.is_null(7) ? nullptr : &m_.json_value(q.int64(7));
    begin('X', name.size() + (shapes ? shapes->size() : 0) + (dtypes ? dtypes->size() : 0));
    o_.lit(",\"cat\":\"cpu_op\",\"name\":");
    o_.put(name);
    host_span(q.int64(0), row_tid(kOpRows, q.int64(9), q.int64(1)), q.int64(3), q.int64(4));
    char* mark = open_args();
    if (!q.is_null(8)) int_arg("External id", q.int64(8));
    if (!q.is_null(5)) int_arg("Sequence number", q.int64(5));
    if (shapes) {
      key("Input Dims");
      o_.put(*shapes);
    }
    if (dtypes) {
      key("Input type");
      o_.put(*dtypes);
    }
    close_args(mark);
    end_event();
    row_done();
  }
}

void ChromeWriter::ranges() {
  auto q = m_.reader().query(
      "SELECT r.pid, r.tid, r.source, r.kind, r.domain_id, r.name_id, r.start, r.\"end\", r.color, r.category, "
      "d.value, r.id FROM range r LEFT JOIN string d ON d.id = r.domain_id" + m_.where_pid("r."));
  while (q.step()) {
    int64_t pid = q.int64(0), tid = q.int64(1), source = q.int64(2), kind = q.int64(3);
    int64_t start = q.int64(6);
    bool unclosed = q.is_null(7);
    int64_t end = unclosed ? start : q.int64(7);
    std::string_view domain = q.is_null(10) ? std::string_view() : q.text(10);
    const std::string& name = m_.json_string(q.int64(5));
    if (domain == kGpuAnnotationDomain) {
      int64_t device = q.is_null(9) ? 0 : q.int64(9);
      stream_name(device, tid);
      begin('X', name.size());
      o_.lit(",\"cat\":\"gpu_user_annotation\",\"name\":");
      o_.put(name);
      span(device, tid, start, end);
      o_.lit(",\"args\":{\"device\":");
      o_.put_int(device);
      int_arg("stream", tid);
      o_.put('}');
      end_event();
      row_done();
      continue;
    }
    const std::string* domain_json = domain.empty() ? nullptr : &m_.json_string(q.int64(4));
    if (kind != range_kind::mark && is_gpuscope_mark(source)) gpuscope_thread(pid);
    begin(kind == range_kind::mark ? 'i' : 'X', name.size() + (domain_json ? domain_json->size() : 0));
    if (kind == range_kind::mark) {
      o_.lit(",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":");
      o_.put(name);
      where(pid, tid, start);
    } else if (is_gpuscope_mark(source)) {
      // The stretches traced and not traced are gpuscope's, not the job's:
      // on the process's "gpuscope" row, under a category consumers that
      // build the job's op tree (TensorBoard) leave alone.
      o_.lit(",\"cat\":\"gpuscope\",\"name\":");
      o_.put(name);
      span(pid, kGpuscopeTid, start, end);
    } else {
      // CUPTI's overhead records under Kineto's category for them.
      if (source == kRangePython) o_.lit(",\"cat\":\"python_function\",\"name\":");
      else if (source == schema::range_source::tracer_overhead) o_.lit(",\"cat\":\"overhead\",\"name\":");
      else o_.lit(",\"cat\":\"user_annotation\",\"name\":");
      o_.put(name);
      host_span(pid, row_tid(kRangeRows, q.int64(11), tid), start, end);
    }
    char* mark = open_args();
    if (source == schema::range_source::nvtx) {
      key("source");
      o_.lit("\"nvtx\"");
    }
    if (domain_json) {
      key("domain");
      o_.put(*domain_json);
    }
    if (kind == range_kind::start_end) {
      key("range kind");
      o_.lit("\"start_end\"");
    }
    if (!q.is_null(8)) int_arg("color", q.int64(8));
    if (!q.is_null(9)) int_arg("category", q.int64(9));
    if (unclosed && kind != range_kind::mark) {
      key("unclosed");
      o_.lit("true");
    }
    close_args(mark);
    end_event();
    row_done();
  }
}

void ChromeWriter::api_calls() {
  auto q = m_.reader().query(
      "SELECT pid, tid, domain, cbid, name_id, start, \"end\", correlation, return_code, id FROM api_call" +
      m_.where_pid());
  while (q.step()) {
    int64_t pid = q.int64(0), tid = row_tid(kApiRows, q.int64(9), q.int64(1)), start = q.int64(5), corr = q.int64(7);
    const CorrelationMap::Entry* c = m_.api_call_correlation(q, 0, pid, 7, corr);
    const std::string& name = m_.json_string(q.int64(4));
    begin('X', name.size());
    if (q.int64(2) == schema::api_domain::driver) o_.lit(",\"cat\":\"cuda_driver\",\"name\":");
    else o_.lit(",\"cat\":\"cuda_runtime\",\"name\":");
    o_.put(name);
    host_span(pid, tid, start, q.int64(6));
    o_.lit(",\"args\":{\"cbid\":");
    o_.put_int(q.int64(3));
    int_arg("correlation", corr);
    if (c && c->has_external) int_arg("External id", c->external_id);
    if (int64_t rc = q.int64(8); rc != 0) int_arg("return code", rc);
    o_.put('}');
    end_event();
    // The launch -> GPU arrow starts here once; each GPU activity ends one.
    if (c && c->gpu) flow(true, m_.flow_id(pid, corr), pid, tid, start);
    row_done();
  }
}

void ChromeWriter::load_step_rows() {
  // Steps already present as ProfilerStep#N ranges are written with the
  // ranges; the others (optimizer or NVTX boundaries) get a ProfilerStep#N
  // event so that TensorBoard and HTA see them, marked so import keeps them
  // as steps only.
  std::map<int64_t, bool> has_ranges;
  auto r = m_.reader().query("SELECT DISTINCT pid FROM range WHERE source=" +
                             std::to_string(schema::range_source::profiler_step) + m_.and_pid());
  while (r.step()) has_ranges[r.int64(0)] = true;
  auto q = m_.reader().query("SELECT pid, number, start, \"end\", source FROM step" + m_.where_pid() +
                             " ORDER BY pid, start");
  // `--steps analysed`: analyze's steps, bounded as it bounds them, so that
  // TensorBoard's step figures describe its window.
  const bool analysed = window_ && !window_->steps.empty() && !has_ranges.count(window_->pid);
  std::map<int64_t, int64_t> sources;  // of the analysed process's steps, by number
  while (q.step()) {
    int64_t pid = q.int64(0);
    if (analysed && pid == window_->pid) sources[q.int64(1)] = q.int64(4);
    if (has_ranges.count(pid) || (analysed && pid == window_->pid)) continue;
    step_info_[pid].push_back({q.int64(1), q.int64(4)});
    step_rows_[pid].second.push_back({q.int64(2), std::max(q.int64(2), q.int64(3))});
  }
  if (analysed)
    for (const auto& s : window_->steps) {
      auto it = sources.find(s.number);
      step_info_[window_->pid].push_back({s.number, it == sources.end() ? int64_t{schema::step_source::nvtx} : it->second});
      step_rows_[window_->pid].second.push_back({s.start, std::max(s.start, s.end)});
    }
  if (step_rows_.empty()) return;
  // The busiest thread of each process carries them.
  for (auto& [pid, rows] : step_rows_) rows.first = pid;
  auto busiest = m_.reader().query("SELECT pid, tid, count(*) AS n FROM op" + m_.where_pid() +
                                   " GROUP BY pid, tid ORDER BY n");
  while (busiest.step())
    if (auto it = step_rows_.find(busiest.int64(0)); it != step_rows_.end()) it->second.first = busiest.int64(1);
}

void ChromeWriter::steps() {
  for (const auto& [pid, rows] : step_rows_) {
    const std::vector<StepRow>& info = step_info_[pid];
    for (size_t i = 0; i < info.size(); ++i) {
      std::string_view source = step_source_name(info[i].source);
      begin('X', source.size());
      o_.lit(",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
      o_.put_int(info[i].number);
      o_.put('"');
      const bool room_after = i + 1 == info.size() || rows.second[i + 1].first > rows.second[i].second;
      const bool room_before = i == 0 || rows.second[i - 1].second < rows.second[i].first;
      host_span(pid, rows.first, rows.second[i].first, rows.second[i].second, room_before, room_after);
      o_.lit(",\"args\":{\"step source\":\"");
      o_.put(source);
      o_.lit("\"}");
      end_event();
    }
  }
}

void ChromeWriter::memory() {
  auto q = m_.reader().query(
      "SELECT pid, device, ts, op, source, address, bytes, stream, correlation, total_allocated, total_reserved "
      "FROM memory_event" + m_.where_pid());
  while (q.step()) {
    int64_t pid = q.int64(0), device = q.int64(1);
    begin('i');
    // Only the torch allocator's events are "[memory]": TensorBoard draws its
    // memory curves from their totals, which CUDA-level events lack.
    if (q.int64(4) == schema::memory_source::cuda)
      o_.lit(",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[cuda memory]\"");
    else
      o_.lit(",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\"");
    where(pid, pid, q.int64(2));
    o_.lit(",\"args\":{\"Device Type\":");
    o_.put(device >= 0 ? '1' : '0');
    int_arg("Device Id", device);
    int_arg("Addr", q.int64(5));
    int_arg("Bytes", q.int64(3) == schema::memory_op::free ? -q.int64(6) : q.int64(6));
    if (!q.is_null(9)) int_arg("Total Allocated", q.int64(9));
    if (!q.is_null(10)) int_arg("Total Reserved", q.int64(10));
    if (!q.is_null(7)) int_arg("stream", q.int64(7));
    if (!q.is_null(8)) int_arg("correlation", q.int64(8));
    o_.put('}');
    end_event();
    row_done();
  }
}

void ChromeWriter::counters() {
  auto q = m_.reader().query("SELECT pid, device, name_id, ts, value FROM counter" + m_.where_pid());
  while (q.step()) {
    const std::string& name = m_.json_string(q.int64(2));
    begin('C', name.size());
    o_.lit(",\"name\":");
    o_.put(name);
    // Device counters sit on the GPU's row, host counters on the process.
    int64_t pid = q.is_null(1) ? q.int64(0) : q.int64(1);
    o_.lit(",\"pid\":");
    o_.put_int(pid);
    o_.lit(",\"ts\":");
    o_.put_us(q.int64(3));
    o_.lit(",\"args\":{\"value\":");
    o_.put_double(q.real(4));
    o_.put('}');
    end_event();
    row_done();
  }
}

}  // namespace gpuscope::formats
