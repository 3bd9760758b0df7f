#include "trace_formats/export/chrome_writer.h"

#include <chrono>
#include <filesystem>

#include "trace_formats/common/text.h"
#include "trace_formats/common/time_math.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::formats {

namespace {

// GPU "processes" sort after every CPU process, in device order.
constexpr int64_t kGpuSortBase = 0x1000000;

std::string basename_of(const std::string& path) {
  return path.empty() ? std::string() : std::filesystem::path(path).filename().string();
}

}  // namespace

void ChromeWriter::header() {
  // Written once: build it as a string, then copy it out.
  std::string buf = "{\n\"schemaVersion\":1,\n\"deviceProperties\":[";
  auto int_member = [&](const char* k, int64_t v) {
    buf += ",\"";
    buf += k;
    buf += "\":";
    append_int(buf, v);
  };
  // Tools index this list by device id, so it runs 0..max without gaps.
  int64_t max_id = -1;
  for (const auto& d : m_.devices()) max_id = std::max(max_id, d.id);
  for (int64_t id = 0; id <= max_id && id < 4096; ++id) {
    if (id) buf += ',';
    const DeviceInfo* dev = nullptr;
    for (const auto& d : m_.devices())
      if (d.id == id) dev = &d;
    buf += "\n{\"id\":";
    append_int(buf, id);
    if (dev) {
      buf += ",\"name\":";
      append_json_string(buf, dev->name);
      int_member("totalGlobalMem", dev->total_memory);
      int_member("computeMajor", dev->compute_major);
      int_member("computeMinor", dev->compute_minor);
      int_member("numSms", dev->sm_count);
      if (!dev->uuid.empty()) {
        buf += ",\"uuid\":";
        append_json_string(buf, dev->uuid);
      }
      if (dev->memory_bandwidth) int_member("memoryBandwidth", dev->memory_bandwidth);
      if (dev->core_clock_khz) int_member("clockRateKhz", dev->core_clock_khz);
    }
    buf += '}';
  }
  buf += "],\n";
  // HTA finds the rank with "rank":\s+(\d+): keep the space after the colon.
  auto [rank, world] = m_.distributed();
  buf += "\"distributedInfo\": {\"backend\": ";
  append_json_string(buf, m_.meta(meta_key::kDistributedBackend, "nccl"));
  buf += ", \"rank\": ";
  append_int(buf, rank);
  buf += ", \"world_size\": ";
  append_int(buf, world);
  buf += "},\n\"displayTimeUnit\":\"ms\",\n";
  if (auto utc = m_.origin_utc_ns()) {
    buf += "\"baseTimeNanoseconds\":";
    append_int(buf, *utc);
    buf += ",\n";
  }
  std::string host = m_.meta(meta_key::kHost);
  if (!host.empty()) {
    buf += "\"hostName\":";
    append_json_string(buf, host);
    buf += ",\n";
  }
  buf += "\"traceEvents\":[";
  o_.room(buf.size());
  o_.put(buf);
}

void ChromeWriter::metadata() {
  // `var`: room for what value() writes.
  auto meta_event = [&](std::string_view name, int64_t pid, int64_t tid, std::string_view arg, size_t var,
                        auto&& value) {
    begin('M', name.size() + arg.size() + var);
    o_.lit(",\"name\":\"");
    o_.put(name);
    o_.put('"');
    where(pid, tid, 0);
    o_.lit(",\"args\":{\"");
    o_.put(arg);
    o_.lit("\":");
    value();
    o_.put('}');
    end_event();
  };
  auto string_event = [&](std::string_view name, int64_t pid, int64_t tid, std::string_view arg, std::string_view s) {
    meta_event(name, pid, tid, arg, 6 * s.size() + 2, [&] { o_.put_json_string(s); });
  };
  for (const auto& p : m_.processes()) {
    std::string name = basename_of(p.exe);
    if (name.empty()) name = "process " + std::to_string(p.pid);
    string_event("process_name", p.pid, 0, "name", name);
    if (p.rank != INT64_MIN) {
      std::string label = "rank " + std::to_string(p.rank);
      string_event("process_labels", p.pid, 0, "labels", label);
    }
    meta_event("process_sort_index", p.pid, 0, "sort_index", 0, [&] { o_.put_int(p.index); });
  }
  for (const auto& t : m_.threads()) {
    string_event("thread_name", t.pid, t.tid, "name", t.name);
    // The main thread first, then by tid.
    meta_event("thread_sort_index", t.pid, t.tid, "sort_index", 0, [&] { o_.put_int(t.tid == t.pid ? 0 : t.tid); });
  }
  // Known devices up front (the importer tells GPU rows by these labels);
  // others when their first activity shows up.
  for (const auto& d : m_.devices()) gpu_name(d.id);
}

void ChromeWriter::gpu_name(int64_t device) {
  if (!gpus_named_.insert(device).second) return;
  std::string label = "GPU " + std::to_string(device);
  for (bool labels : {false, true}) {
    begin('M', 6 * label.size() + 2);
    if (labels) o_.lit(",\"name\":\"process_labels\"");
    else o_.lit(",\"name\":\"process_name\"");
    where(device, 0, 0);
    if (labels) o_.lit(",\"args\":{\"labels\":");
    else o_.lit(",\"args\":{\"name\":");
    o_.put_json_string(label);
    o_.lit("}}");
  }
  begin('M');
  o_.lit(",\"name\":\"process_sort_index\"");
  where(device, 0, 0);
  o_.lit(",\"args\":{\"sort_index\":");
  o_.put_int(saturating_add(kGpuSortBase, device));  // ids of an imported trace may be any int64
  o_.lit("}}");
}

void ChromeWriter::name_stream(int64_t device, int64_t stream) {
  bool added = streams_named_.insert({device, stream}).second;
  last_stream_ = {device, stream};
  if (!added) return;
  gpu_name(device);
  begin('M');
  o_.lit(",\"name\":\"thread_name\"");
  where(device, stream, 0);
  o_.lit(",\"args\":{\"name\":\"stream ");
  o_.put_int(stream);
  o_.lit("\"}}");
  begin('M');
  o_.lit(",\"name\":\"thread_sort_index\"");
  where(device, stream, 0);
  o_.lit(",\"args\":{\"sort_index\":");
  o_.put_int(stream);
  o_.lit("}}");
}

void ChromeWriter::gpuscope_thread(int64_t pid) {
  if (!gpuscope_named_.insert(pid).second) return;
  begin('M');
  o_.lit(",\"name\":\"thread_name\"");
  where(pid, kGpuscopeTid, 0);
  o_.lit(",\"args\":{\"name\":\"gpuscope\"}}");
  begin('M');
  o_.lit(",\"name\":\"thread_sort_index\"");
  where(pid, kGpuscopeTid, 0);
  o_.lit(",\"args\":{\"sort_index\":-1}}");
}

void ChromeWriter::write_marks() {
  for (const auto& p : m_.processes())
    for (const GpuscopeMark& mk : marks_) {
      gpuscope_thread(p.pid);
      begin(mk.start == mk.end ? 'i' : 'X', 6 * mk.name.size() + 2);
      if (mk.start == mk.end) o_.lit(",\"s\":\"p\"");
      o_.lit(",\"cat\":\"gpuscope\",\"name\":");
      o_.put_json_string(mk.name);
      if (mk.start == mk.end) where(p.pid, kGpuscopeTid, mk.start);
      else span(p.pid, kGpuscopeTid, mk.start, mk.end);
      end_event();
    }
}

void ChromeWriter::flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  begin(start ? 's' : 'f');
  o_.lit(",\"id\":");
  o_.put_int(static_cast<int64_t>(id));
  where(pid, tid, ts);
  if (start) o_.lit(",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
  else o_.lit(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"");
  end_event();
}

void ChromeWriter::wait_flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  begin(start ? 's' : 'f');
  o_.lit(",\"id\":");
  o_.put_int(static_cast<int64_t>(id));
  where(pid, tid, ts);
  if (start) o_.lit(",\"cat\":\"event_wait\",\"name\":\"event_wait\"");
  else o_.lit(",\"cat\":\"event_wait\",\"name\":\"event_wait\",\"bp\":\"e\"");
  end_event();
}

void ChromeWriter::sync_flow(bool start, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  begin(start ? 's' : 'f');
  o_.lit(",\"id\":");
  o_.put_int(static_cast<int64_t>(id));
  where(pid, tid, ts);
  if (start) o_.lit(",\"cat\":\"event_sync\",\"name\":\"event_sync\"");
  else o_.lit(",\"cat\":\"event_sync\",\"name\":\"event_sync\",\"bp\":\"e\"");
  end_event();
}

void ChromeWriter::wait_flow_ends() {
  for (size_t i = 0; i < wait_ends_.size(); ++i) {
    const WaitEnd& e = wait_ends_[i];
    if (e.corr == INT64_MAX) continue;  // nothing ran on the stream after the wait
    const EventWaits::Wait& w = waits_.waits()[i];
    wait_flow(false, m_.flow_id(w.pid, w.correlation), e.device, e.stream, e.ts);
  }
}

void ChromeWriter::trailer() {
  std::string buf = "\n],\n\"traceName\":";
  append_json_string(buf, basename_of(out_.path()));
  buf += "\n}\n";
  o_.room(buf.size());
  o_.put(buf);
  o_.flush();
}

void ChromeWriter::write_all() {
  header();
  metadata();
  write_marks();
  // The kinds in the stream's order, which is the order Kineto writes them
  // in, with this writer's phases between them (the before() hooks).
  store::events::visit_all(m_.reader().db(), *this, {.pid = m_.only_pid()});
  trailer();
}

uint64_t chrome_row_total(ExportModel& m) {
  uint64_t n = 0;
  for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "memory_event", "counter"})
    n += m.count_rows(t);
  return n;
}

std::vector<store::TableUse> chrome_table_uses() {
  std::vector<store::TableUse> uses = store::events::uses<ChromeWriter>(ChromeWriter::kConsumer);
  uses.push_back(store::table_use<store::rec::GraphLaunch>(ChromeWriter::kConsumer, {},
                                                           chrome_columns::kGraphLaunchLeftOut));
  return uses;
}

void write_chrome_file(ExportModel& model, const std::string& path, const ExportOptions& opt,
                       std::vector<GpuscopeMark> marks, ExportStats& stats) {
  OutputFile out(path, opt.force);
  Progress progress("exporting " + path, opt.progress);
  ChromeWriter w(model, out, progress, opt.progress ? chrome_row_total(model) : 0);
  w.set_marks(std::move(marks));
  w.set_steps(replaced_steps(model.reader(), opt));
  w.write_all();
  progress.done();
  stats.commit(out, w.events());
}

ExportStats export_chrome(store::Reader& db, const std::string& path, const ExportOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<GpuscopeMark> marks = gpuscope_marks(db, opt);
  WindowedTables windowed(db, opt);
  ExportModel model(db, opt.only_pid);
  ExportStats s;
  write_chrome_file(model, path, opt, std::move(marks), s);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace gpuscope::formats
