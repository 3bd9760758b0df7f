#include "export/perfetto_writer.h"

#include <filesystem>

#include "export/json_text.h"
#include "import/kineto_names.h"

namespace gpuscope::formats {

namespace pb = perfetto::protos;

namespace {

constexpr uint32_t kSequence = 1;
constexpr uint32_t kBootTime = 6;     // BuiltinClock BOOTTIME, the default trace clock
constexpr uint32_t kDeltaClock = 64;  // first sequence-scoped clock id
// Perfetto groups tracks by pid; GPUs get pids no Linux process can have (pid_max <= 2^22).
constexpr int64_t kGpuPidBase = int64_t{1} << 30;

constexpr const char* kCategoryNames[] = {"",     "cpu_op",     "user_annotation", "cuda_runtime",
                                          "cuda_driver", "kernel", "gpu_memcpy",  "gpu_memset",
                                          "cuda_sync",   "python_function", "gpu_user_annotation", "step",
                                          "cpu_instant_event"};

std::string utf8(std::string_view s) {
  std::string out;
  append_valid_utf8(out, s);
  return out;
}

int64_t clamp_ts(int64_t ts) { return ts < 0 ? 0 : ts; }

}  // namespace

PerfettoWriter::PerfettoWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
    : m_(model), out_(out), progress_(progress), total_rows_(total_rows) {
  buf_.reserve((size_t{1} << 20) + 4096);
  for (const auto& t : m_.threads()) thread_names_[{t.pid, t.tid}] = t.name;
}

void PerfettoWriter::begin_packet(int64_t ts) {
  ts = std::max(clamp_ts(ts), last_ts_);
  pkt_.Clear();
  // The sequence's default clock is incremental: each timestamp is a delta.
  pkt_.set_timestamp(static_cast<uint64_t>(ts - last_ts_));
  last_ts_ = ts;
  pkt_.set_trusted_packet_sequence_id(kSequence);
  pkt_.set_sequence_flags(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
}

void PerfettoWriter::descriptor_packet() {
  pkt_.Clear();
  pkt_.set_timestamp(0);  // no time of its own: a zero delta
  pkt_.set_trusted_packet_sequence_id(kSequence);
}

void PerfettoWriter::emit() {
  // A Trace is `repeated TracePacket packet = 1`: tag 0x0A, length, bytes.
  size_t n = pkt_.ByteSizeLong();
  buf_ += '\x0a';
  while (n >= 0x80) {
    buf_ += static_cast<char>((n & 0x7F) | 0x80);
    n >>= 7;
  }
  buf_ += static_cast<char>(n);
  pkt_.AppendToString(&buf_);
  if (buf_.size() >= (size_t{1} << 20)) {
    out_.write(buf_);
    buf_.clear();
  }
}

void PerfettoWriter::start_sequence() {
  pkt_.Clear();
  pkt_.set_trusted_packet_sequence_id(kSequence);
  pkt_.set_sequence_flags(pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
  pkt_.set_timestamp(0);
  pkt_.set_timestamp_clock_id(kBootTime);
  // Clock 64 (sequence-scoped, incremental) starts where the trace clock is 0.
  auto* snapshot = pkt_.mutable_clock_snapshot();
  auto* boot = snapshot->add_clocks();
  boot->set_clock_id(kBootTime);
  boot->set_timestamp(0);
  auto* delta = snapshot->add_clocks();
  delta->set_clock_id(kDeltaClock);
  delta->set_timestamp(0);
  delta->set_is_incremental(true);
  pkt_.mutable_trace_packet_defaults()->set_timestamp_clock_id(kDeltaClock);
  auto* interned = pkt_.mutable_interned_data();
  for (uint64_t c = 1; c < kCategoryCount; ++c) {
    auto* cat = interned->add_event_categories();
    cat->set_iid(c);
    cat->set_name(kCategoryNames[c]);
  }
  emit();
}

uint64_t PerfettoWriter::name_iid(int64_t id) {
  if (id < 0) return text_iid("");
  auto i = static_cast<size_t>(id);
  if (i >= name_iids_.size()) name_iids_.resize(std::max(i + 1, m_.reader().strings().size()), 0);
  if (!name_iids_[i]) {
    name_iids_[i] = next_iid_++;
    auto* n = pkt_.mutable_interned_data()->add_event_names();
    n->set_iid(name_iids_[i]);
    n->set_name(utf8(m_.str(id)));
  }
  return name_iids_[i];
}

uint64_t PerfettoWriter::text_iid(const std::string& text) {
  auto [it, added] = text_iids_.emplace(text, 0);
  if (added) {
    it->second = next_iid_++;
    auto* n = pkt_.mutable_interned_data()->add_event_names();
    n->set_iid(it->second);
    n->set_name(utf8(text));
  }
  return it->second;
}

uint64_t PerfettoWriter::process_track(int64_t pid) {
  Key key{kProcess, pid, 0, 0};
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  auto* pd = td->mutable_process();
  pd->set_pid(static_cast<int32_t>(pid));
  std::string name = "process " + std::to_string(pid);
  for (const auto& p : m_.processes())
    if (p.pid == pid) {
      if (!p.exe.empty()) name = std::filesystem::path(p.exe).filename().string();
      if (!p.cmdline.empty()) pd->add_cmdline(utf8(p.cmdline));
      if (p.rank != INT64_MIN) pd->add_process_labels("rank " + std::to_string(p.rank));
    }
  pd->set_process_name(utf8(name));
  emit();
  return uuid;
}

uint64_t PerfettoWriter::thread_track(int64_t pid, int64_t tid) {
  Key key{kThread, pid, tid, 0};
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t parent = process_track(pid);
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_parent_uuid(parent);
  auto* th = td->mutable_thread();
  th->set_pid(static_cast<int32_t>(pid));
  th->set_tid(tid);
  auto it = thread_names_.find({pid, tid});
  th->set_thread_name(utf8(it != thread_names_.end() && !it->second.empty() ? it->second
                                                                            : "thread " + std::to_string(tid)));
  emit();
  return uuid;
}

uint64_t PerfettoWriter::gpu_track(int64_t device) {
  Key key{kGpu, device, 0, 0};
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_child_ordering(pb::TrackDescriptor::EXPLICIT);
  auto* pd = td->mutable_process();
  pd->set_pid(static_cast<int32_t>(kGpuPidBase + device));
  std::string name = "GPU " + std::to_string(device);
  for (const auto& d : m_.devices())
    if (d.id == device && !d.name.empty()) name += " (" + d.name + ")";
  pd->set_process_name(utf8(name));
  emit();
  return uuid;
}

uint64_t PerfettoWriter::stream_track(int64_t pid, int64_t device, int64_t stream) {
  Key key{kStream, pid, device, stream};
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  std::string name = "stream " + std::to_string(stream);
  if (stream_pids_[device] > 1) name += " (pid " + std::to_string(pid) + ")";
  return child_track(key, gpu_track(device), name, static_cast<int32_t>(stream));
}

uint64_t PerfettoWriter::child_track(const Key& key, uint64_t parent, const std::string& name, int32_t order) {
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_parent_uuid(parent);
  td->set_name(utf8(name));
  td->set_sibling_order_rank(order);
  emit();
  return uuid;
}

uint64_t PerfettoWriter::counter_track(const Key& key, uint64_t parent, const std::string& name, bool bytes) {
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_parent_uuid(parent);
  td->set_name(utf8(name));
  auto* cd = td->mutable_counter();
  if (bytes) cd->set_unit(pb::CounterDescriptor::UNIT_SIZE_BYTES);
  emit();
  return uuid;
}

uint64_t PerfettoWriter::lane_track(int kind, int64_t a, int64_t b, int64_t start, int64_t end, uint64_t parent,
                                    const std::string& name) {
  std::vector<int64_t>& lanes = lanes_[Key{kind, a, b, -1}];
  size_t lane = lanes.size();
  for (size_t i = 0; i < lanes.size(); ++i)
    if (lanes[i] <= start) {
      lane = i;
      break;
    }
  if (lane == lanes.size()) lanes.push_back(end);
  else lanes[lane] = end;
  return child_track(Key{kind, a, b, static_cast<int64_t>(lane)}, parent,
                     lane == 0 ? name : name + " #" + std::to_string(lane + 1), 1000000 + static_cast<int32_t>(lane));
}

void PerfettoWriter::close_until(int64_t ts) {
  while (!open_.empty() && open_.top().end <= ts) {
    Open o = open_.top();
    open_.pop();
    auto& stack = open_by_track_[o.track];
    if (!stack.empty()) stack.pop_back();
    begin_packet(o.end);
    auto* te = pkt_.mutable_track_event();
    te->set_type(pb::TrackEvent::TYPE_SLICE_END);
    te->set_track_uuid(o.track);
    emit();
  }
}

void PerfettoWriter::open_slice(uint64_t track, const Slice& s) {
  close_until(s.start);
  int64_t end = std::max(s.end, s.start);
  auto& stack = open_by_track_[track];
  if (!stack.empty() && end > stack.back()) end = stack.back();  // keep it inside its parent
  begin_packet(s.start);
  auto* te = pkt_.mutable_track_event();
  te->set_type(pb::TrackEvent::TYPE_SLICE_BEGIN);
  te->set_track_uuid(track);
  te->add_category_iids(s.cat);
  te->set_name_iid(s.name_id != INT64_MIN ? name_iid(s.name_id) : text_iid(s.text));
  if (s.flow_out) te->add_flow_ids(s.flow_out);
  if (s.flow_in) te->add_terminating_flow_ids(s.flow_in);
  emit();
  stack.push_back(end);
  open_.push({end, track});
  ++events_;
}

void PerfettoWriter::instant(uint64_t track, int64_t ts, uint64_t cat, int64_t name_id) {
  close_until(ts);
  begin_packet(ts);
  auto* te = pkt_.mutable_track_event();
  te->set_type(pb::TrackEvent::TYPE_INSTANT);
  te->set_track_uuid(track);
  te->add_category_iids(cat);
  te->set_name_iid(name_iid(name_id));
  emit();
  ++events_;
}

void PerfettoWriter::counter_value(uint64_t track, int64_t ts, double value) {
  close_until(ts);
  begin_packet(ts);
  auto* te = pkt_.mutable_track_event();
  te->set_type(pb::TrackEvent::TYPE_COUNTER);
  te->set_track_uuid(track);
  te->set_double_counter_value(value);
  emit();
  ++events_;
}

}  // namespace gpuscope::formats
