#include "export/chrome_writer.h"

#include <chrono>
#include <filesystem>

#include "export/json_text.h"

namespace gpuscope::formats {

namespace {

// GPU "processes" sort after every CPU process, in device order.
constexpr int64_t kGpuSortBase = 0x1000000;

std::string basename_of(const std::string& path) {
  return path.empty() ? std::string() : std::filesystem::path(path).filename().string();
}

}  // namespace

void ChromeWriter::append_int_(int64_t v) { append_int(buf_, v); }

void ChromeWriter::where(int64_t pid, int64_t tid, int64_t ts) {
  buf_ += ",\"pid\":";
  append_int(buf_, pid);
  buf_ += ",\"tid\":";
  append_int(buf_, tid);
  buf_ += ",\"ts\":";
  append_us(buf_, ts);
}

void ChromeWriter::span(int64_t pid, int64_t tid, int64_t start, int64_t end) {
  where(pid, tid, start);
  buf_ += ",\"dur\":";
  append_us(buf_, end > start ? end - start : 0);
}

void ChromeWriter::flush() {
  out_.write(buf_);
  buf_.clear();
}

void ChromeWriter::header() {
  buf_ += "{\n\"schemaVersion\":1,\n\"deviceProperties\":[";
  // Tools index this list by device id, so it runs 0..max without gaps.
  int64_t max_id = -1;
  for (const auto& d : m_.devices()) max_id = std::max(max_id, d.id);
  for (int64_t id = 0; id <= max_id && id < 4096; ++id) {
    if (id) buf_ += ',';
    const DeviceInfo* dev = nullptr;
    for (const auto& d : m_.devices())
      if (d.id == id) dev = &d;
    buf_ += "\n{\"id\":";
    append_int(buf_, id);
    if (dev) {
      buf_ += ",\"name\":";
      append_json_string(buf_, dev->name);
      int_arg("totalGlobalMem", dev->total_memory);
      int_arg("computeMajor", dev->compute_major);
      int_arg("computeMinor", dev->compute_minor);
      int_arg("numSms", dev->sm_count);
      if (!dev->uuid.empty()) {
        key("uuid");
        append_json_string(buf_, dev->uuid);
      }
      if (dev->memory_bandwidth) int_arg("memoryBandwidth", dev->memory_bandwidth);
      if (dev->core_clock_khz) int_arg("clockRateKhz", dev->core_clock_khz);
    }
    buf_ += '}';
  }
  buf_ += "],\n";
  // HTA finds the rank with "rank":\s+(\d+): keep the space after the colon.
  auto [rank, world] = m_.distributed();
  buf_ += "\"distributedInfo\": {\"backend\": ";
  append_json_string(buf_, m_.meta("distributed_backend", "nccl"));
  buf_ += ", \"rank\": ";
  append_int(buf_, rank);
  buf_ += ", \"world_size\": ";
  append_int(buf_, world);
  buf_ += "},\n\"displayTimeUnit\":\"ms\",\n";
  if (auto utc = m_.origin_utc_ns()) {
    buf_ += "\"baseTimeNanoseconds\":";
    append_int(buf_, *utc);
    buf_ += ",\n";
  }
  std::string host = m_.meta("host");
  if (!host.empty()) {
    buf_ += "\"hostName\":";
    append_json_string(buf_, host);
    buf_ += ",\n";
  }
  buf_ += "\"traceEvents\":[";
}

void ChromeWriter::metadata() {
  auto meta_event = [&](const char* name, int64_t pid, int64_t tid, const char* arg, auto&& value) {
    begin("M");
    buf_ += ",\"name\":\"";
    buf_ += name;
    buf_ += '"';
    where(pid, tid, 0);
    buf_ += ",\"args\":{\"";
    buf_ += arg;
    buf_ += "\":";
    value();
    buf_ += '}';
    end_event();
  };
  for (const auto& p : m_.processes()) {
    std::string name = basename_of(p.exe);
    if (name.empty()) name = "process " + std::to_string(p.pid);
    meta_event("process_name", p.pid, 0, "name", [&] { append_json_string(buf_, name); });
    if (p.rank != INT64_MIN)
      meta_event("process_labels", p.pid, 0, "labels",
                 [&] { append_json_string(buf_, "rank " + std::to_string(p.rank)); });
    meta_event("process_sort_index", p.pid, 0, "sort_index", [&] { append_int(buf_, p.index); });
  }
  for (const auto& t : m_.threads()) {
    meta_event("thread_name", t.pid, t.tid, "name", [&] { append_json_string(buf_, t.name); });
    // The main thread first, then by tid.
    meta_event("thread_sort_index", t.pid, t.tid, "sort_index", [&] { append_int(buf_, t.tid == t.pid ? 0 : t.tid); });
  }
  // Known devices up front (the importer tells GPU rows by these labels);
  // others when their first activity shows up.
  for (const auto& d : m_.devices()) gpu_name(d.id);
}

void ChromeWriter::gpu_name(int64_t device) {
  if (!gpus_named_.insert(device).second) return;
  std::string label = "GPU " + std::to_string(device);
  for (const char* what : {"process_name", "process_labels"}) {
    begin("M");
    buf_ += ",\"name\":\"";
    buf_ += what;
    buf_ += '"';
    where(device, 0, 0);
    buf_ += std::string_view(what) == "process_name" ? ",\"args\":{\"name\":" : ",\"args\":{\"labels\":";
    append_json_string(buf_, label);
    buf_ += "}}";
  }
  begin("M");
  buf_ += ",\"name\":\"process_sort_index\"";
  where(device, 0, 0);
  buf_ += ",\"args\":{\"sort_index\":";
  append_int(buf_, kGpuSortBase + device);
  buf_ += "}}";
}

void ChromeWriter::stream_name(int64_t device, int64_t stream) {
  if (!streams_named_.insert({device, stream}).second) return;
  gpu_name(device);
  begin("M");
  buf_ += ",\"name\":\"thread_name\"";
  where(device, stream, 0);
  buf_ += ",\"args\":{\"name\":\"stream ";
  append_int(buf_, stream);
  buf_ += "\"}}";
  begin("M");
  buf_ += ",\"name\":\"thread_sort_index\"";
  where(device, stream, 0);
  buf_ += ",\"args\":{\"sort_index\":";
  append_int(buf_, stream);
  buf_ += "}}";
}

void ChromeWriter::flow(const char* ph, uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  begin(ph);
  buf_ += ",\"id\":";
  append_int(buf_, static_cast<int64_t>(id));
  where(pid, tid, ts);
  buf_ += ",\"cat\":\"ac2g\",\"name\":\"ac2g\"";
  if (ph[0] == 'f') buf_ += ",\"bp\":\"e\"";
  end_event();
}

void ChromeWriter::trailer() {
  buf_ += "\n],\n\"traceName\":";
  append_json_string(buf_, basename_of(out_.path()));
  buf_ += "\n}\n";
  flush();
}

void ChromeWriter::write_all() {
  header();
  metadata();
  ops();
  ranges();
  api_calls();
  kernels();
  memcpys();
  memsets();
  syncs();
  steps();
  memory();
  counters();
  trailer();
}

uint64_t chrome_row_total(ExportModel& m) {
  uint64_t n = 0;
  for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "memory_event", "counter"})
    n += static_cast<uint64_t>(m.reader().db().query_int("SELECT count(*) FROM " + std::string(t) + m.where_pid()).value_or(0));
  return n;
}

ExportStats export_chrome(store::Reader& db, const std::string& path, const ExportOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  ExportModel model(db, opt.only_pid);
  OutputFile out(path, opt.force);
  Progress progress("exporting " + path, opt.progress);
  ChromeWriter w(model, out, progress, opt.progress ? chrome_row_total(model) : 0);
  w.write_all();
  progress.done();
  ExportStats s;
  s.events = w.events();
  s.raw_bytes = out.bytes_in();
  s.bytes = out.commit();
  s.files.push_back(path);
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

}  // namespace gpuscope::formats
