// Host-side events of the Chrome export: ops, annotations, API calls, steps,
// memory and counters.
#include <map>
#include <tuple>

#include "trace_formats/export/chrome_writer.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/import/kineto_names.h"

namespace gpuscope::formats {

namespace range_kind = schema::range_kind;
using namespace store::rec;  // the row structs of records.h: Kernel, Op, Step, ...

namespace {

bool is_gpuscope_mark(int64_t source) {
  return source == schema::range_source::sampling_window || source == schema::range_source::untraced_drained;
}

}  // namespace

void ChromeWriter::on(const Op& op) {
  const std::string& name = m_.json_string(op.name_id_or_zero());
  const std::string* shapes = op.null(Op::kShapesId) ? nullptr : &m_.json_value(op.shapes_id);
  const std::string* dtypes = op.null(Op::kDtypesId) ? nullptr : &m_.json_value(op.dtypes_id);
  begin('X', name.size() + (shapes ? shapes->size() : 0) + (dtypes ? dtypes->size() : 0));
  o_.lit(",\"cat\":\"cpu_op\",\"name\":");
  o_.put(name);
  const auto [start, end] = fitted(kOpRows, op.id, op.start_or_zero(), op.end_or_zero());
  host_span(op.pid_or_zero(), row_tid(kOpRows, op.id, op.tid_or_zero()), start, end);
  char* mark = open_args();
  recorded_args(op.start_or_zero(), op.end_or_zero(), start, end);
  if (!op.null(Op::kExternalId)) int_arg("External id", op.external_id);
  if (!op.null(Op::kSeqNr)) int_arg("Sequence number", op.seq_nr);
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

void ChromeWriter::on(const Range& r) {
  int64_t pid = r.pid_or_zero(), tid = r.tid_or_zero(), source = r.source_or_zero(), kind = r.kind_or_zero();
  int64_t start = r.start_or_zero();
  bool unclosed = r.null(Range::kEnd);
  int64_t end = unclosed ? start : r.end;
  std::string_view domain = m_.str(r.domain_id);  // empty for the default domain (NULL)
  const std::string& name = m_.json_string(r.name_id_or_zero());
  if (domain == kGpuAnnotationDomain) {
    int64_t device = r.category_or_zero();
    stream_name(device, tid);
    begin('X', name.size());
    o_.lit(",\"cat\":\"gpu_user_annotation\",\"name\":");
    o_.put(name);
    gpu_span(device, tid, start, end);
    o_.lit(",\"args\":{\"device\":");
    o_.put_int(device);
    int_arg("stream", tid);
    o_.put('}');
    end_event();
    row_done();
    return;
  }
  const std::string* domain_json = domain.empty() ? nullptr : &m_.json_string(r.domain_id);
  int64_t written_start = start, written_end = end;
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
    std::tie(written_start, written_end) = fitted(kRangeRows, r.id, start, end);
    host_span(pid, row_tid(kRangeRows, r.id, tid), written_start, written_end);
  }
  char* mark = open_args();
  recorded_args(start, end, written_start, written_end);
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
  if (!r.null(Range::kColor)) int_arg("color", r.color);
  if (!r.null(Range::kCategory)) int_arg("category", r.category);
  if (unclosed && kind != range_kind::mark) {
    key("unclosed");
    o_.lit("true");
  }
  close_args(mark);
  end_event();
  row_done();
}

void ChromeWriter::on(const ApiCall& a) {
  int64_t pid = a.pid_or_zero(), tid = row_tid(kApiRows, a.id, a.tid_or_zero());
  const auto [start, end] = fitted(kApiRows, a.id, a.start_or_zero(), a.end_or_zero());
  int64_t corr = a.correlation_or_zero();
  const CorrelationMap::Entry* c = m_.api_call_correlation(a.pid, a.correlation);
  const std::string& name = m_.json_string(a.name_id_or_zero());
  begin('X', name.size());
  if (a.domain == schema::api_domain::driver) o_.lit(",\"cat\":\"cuda_driver\",\"name\":");
  else o_.lit(",\"cat\":\"cuda_runtime\",\"name\":");
  o_.put(name);
  host_span(pid, tid, start, end);
  o_.lit(",\"args\":{\"cbid\":");
  o_.put_int(a.cbid_or_zero());
  recorded_args(a.start_or_zero(), a.end_or_zero(), start, end);
  int_arg("correlation", corr);
  if (c && c->has_external) int_arg("External id", c->external_id);
  if (int64_t rc = a.return_code_or_zero(); rc != 0) int_arg("return code", rc);
  o_.put('}');
  end_event();
  // The launch -> GPU arrow starts here once; each GPU activity ends one.
  if (c && c->gpu) flow(true, m_.flow_id(pid, corr), pid, tid, start);
  if (const auto* waits = waits_.recorded_by(a.pid, a.correlation))
    for (size_t w : *waits) wait_flow(true, m_.flow_id(pid, waits_.waits()[w].correlation), pid, tid, start);
  row_done();
}

void ChromeWriter::before(Tag<Step>) {
  // Steps already present as ProfilerStep#N ranges are written with the
  // ranges; the others (optimizer or NVTX boundaries) get a ProfilerStep#N
  // event so that TensorBoard and HTA see them, marked so import keeps them
  // as steps only.
  auto r = m_.reader().query("SELECT DISTINCT pid FROM range WHERE source=" +
                             std::to_string(schema::range_source::profiler_step) + m_.and_pid());
  while (r.step()) step_ranges_[r.int64("pid")] = true;
  // analyze's steps, bounded as it bounds them (replaced_steps()), so that
  // TensorBoard's step figures describe analyze's: set by write_chrome_file.
  if (replaced_ && (step_ranges_.count(replaced_->pid) || (m_.only_pid() && *m_.only_pid() != replaced_->pid)))
    replaced_.reset();
}

void ChromeWriter::on(const Step& step) {
  int64_t pid = step.pid_or_zero(), number = step.number_or_zero(), source = step.source_or_zero();
  int64_t start = step.start_or_zero();
  const bool replaced = replaced_ && pid == replaced_->pid;
  if (replaced) replaced_sources_[number] = source;
  if (step_ranges_.count(pid) || replaced) return;
  step_info_[pid].push_back({number, source});
  step_rows_[pid].second.push_back({start, std::max(start, step.end_or_zero())});
}

void ChromeWriter::finish_step_rows() {
  if (replaced_)
    for (const auto& s : replaced_->steps) {
      auto it = replaced_sources_.find(s.number);
      step_info_[replaced_->pid].push_back(
          {s.number, it == replaced_sources_.end() ? int64_t{schema::step_source::nvtx} : it->second});
      step_rows_[replaced_->pid].second.push_back({s.start, std::max(s.start, s.end)});
    }
  if (step_rows_.empty()) return;
  // The busiest thread of each process carries them.
  for (auto& [pid, rows] : step_rows_) rows.first = pid;
  auto busiest = m_.reader().query("SELECT pid, tid, count(*) AS n FROM op" + m_.where_pid() +
                                   " GROUP BY pid, tid ORDER BY n");
  while (busiest.step())
    if (auto it = step_rows_.find(busiest.int64("pid")); it != step_rows_.end())
      it->second.first = busiest.int64("tid");
}

void ChromeWriter::steps() {
  int64_t base = 0;  // as plan_overlaps numbers them
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
      const auto [start, end] = rows.second[i];
      const auto [written_start, written_end] = fitted(kStepRows, base + static_cast<int64_t>(i), start, end);
      host_span(pid, rows.first, written_start, written_end, room_before, room_after);
      o_.lit(",\"args\":{\"step source\":\"");
      o_.put(source);
      o_.put('"');
      recorded_args(start, end, written_start, written_end);
      o_.put('}');
      end_event();
    }
    base += static_cast<int64_t>(rows.second.size());
  }
}

void ChromeWriter::on(const MemoryEvent& e) {
  int64_t pid = e.pid_or_zero(), device = e.device_or_zero(), bytes = e.bytes_or_zero();
  begin('i');
  // Only the torch allocator's events are "[memory]": TensorBoard draws its
  // memory curves from their totals, which CUDA-level events lack.
  if (e.source == schema::memory_source::cuda)
    o_.lit(",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[cuda memory]\"");
  else
    o_.lit(",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\"");
  where(pid, pid, e.ts_or_zero());
  o_.lit(",\"args\":{\"Device Type\":");
  o_.put(device >= 0 ? '1' : '0');
  int_arg("Device Id", device);
  int_arg("Addr", e.address_or_zero());
  int_arg("Bytes", e.op == schema::memory_op::free ? -bytes : bytes);
  if (!e.null(MemoryEvent::kTotalAllocated)) int_arg("Total Allocated", e.total_allocated);
  if (!e.null(MemoryEvent::kTotalReserved)) int_arg("Total Reserved", e.total_reserved);
  if (!e.null(MemoryEvent::kStream)) int_arg("stream", e.stream);
  if (!e.null(MemoryEvent::kCorrelation)) int_arg("correlation", e.correlation);
  o_.put('}');
  end_event();
  row_done();
}

void ChromeWriter::on(const Counter& c) {
  const std::string& name = m_.json_string(c.name_id_or_zero());
  begin('C', name.size());
  o_.lit(",\"name\":");
  o_.put(name);
  // Device counters sit on the GPU's row, host counters on the process.
  int64_t pid = c.null(Counter::kDevice) ? c.pid_or_zero() : c.device;
  o_.lit(",\"pid\":");
  o_.put_int(pid);
  o_.lit(",\"ts\":");
  o_.put_us(c.ts_or_zero());
  o_.lit(",\"args\":{\"value\":");
  o_.put_double(c.value);
  o_.put('}');
  end_event();
  row_done();
}

}  // namespace gpuscope::formats
