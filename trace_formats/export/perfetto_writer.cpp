#include "trace_formats/export/perfetto_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "trace_formats/common/text.h"
#include "trace_formats/import/kineto_names.h"

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
                                          "cpu_instant_event", "overhead", "gpuscope"};
static_assert(sizeof kCategoryNames / sizeof kCategoryNames[0] == PerfettoWriter::kCategoryCount,
              "a name for every category");

int64_t clamp_ts(int64_t ts) { return ts < 0 ? 0 : ts; }

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>(v | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A TrackEvent body: at most 4 varints and kMaxFixed64 fixed64 with their tags.
constexpr size_t kMaxFixed64 = 16;
class TeBytes {
 public:
  void byte(unsigned b) { *p_++ = static_cast<char>(b); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void fixed64(uint64_t v) {
    std::memcpy(p_, &v, 8);
    p_ += 8;
  }
  std::string_view view() const { return {buf_, static_cast<size_t>(p_ - buf_)}; }

 private:
  char buf_[4 * 11 + kMaxFixed64 * 10];
  char* p_ = buf_;
};

// TrackEvent fields every event starts with: category_iids (3), type (9),
// name_iid (10), track_uuid (11).
void track_event_head(TeBytes& te, uint64_t cat, uint64_t type, uint64_t name_iid, uint64_t track) {
  te.byte(0x18);
  te.varint(cat);
  te.byte(0x48);
  te.varint(type);
  te.byte(0x50);
  te.varint(name_iid);
  te.byte(0x58);
  te.varint(track);
}

}  // namespace

PerfettoWriter::PerfettoWriter(ExportModel& model, OutputFile& out, Progress& progress, uint64_t total_rows)
    : m_(model), out_(out), progress_(progress), total_rows_(total_rows) {
  for (const auto& t : m_.threads()) thread_names_[{t.pid, t.tid}] = t.name;
}

void PerfettoWriter::descriptor_packet() {
  pkt_.Clear();
  pkt_.set_timestamp(0);  // no time of its own: a zero delta
  pkt_.set_trusted_packet_sequence_id(kSequence);
}

void PerfettoWriter::emit() {
  // A Trace is `repeated TracePacket packet = 1`: tag 0x0A, length, bytes.
  scratch_.clear();
  pkt_.AppendToString(&scratch_);
  out_.room(scratch_.size() + 16);
  out_.put('\x0a');
  out_.put_varint(scratch_.size());
  out_.put(scratch_);
  out_.maybe_flush();
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

uint64_t PerfettoWriter::name_iid(int64_t name) {
  if (RowTexts::is_text(name)) {
    size_t i = RowTexts::index(name);
    if (i >= text_iids_.size()) text_iids_.resize(texts_.size(), 0);
    if (!text_iids_[i]) text_iids_[i] = intern(texts_.text(name));
    return text_iids_[i];
  }
  auto i = static_cast<size_t>(name);
  if (i >= string_iids_.size()) string_iids_.resize(std::max(i + 1, m_.reader().strings().size()), 0);
  if (!string_iids_[i]) string_iids_[i] = intern(m_.str(name));
  return string_iids_[i];
}

uint64_t PerfettoWriter::intern(std::string_view text) {
  // InternedData.event_names (2) { iid (1), name (2) } for the next event packet.
  uint64_t iid = next_iid_++;
  scratch_.clear();
  append_valid_utf8(scratch_, text);
  std::string name;
  name += '\x08';
  append_varint(name, iid);
  name += '\x12';
  append_varint(name, scratch_.size());
  name += scratch_;
  interned_ += '\x12';
  append_varint(interned_, name.size());
  interned_ += name;
  return iid;
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
      if (!p.cmdline.empty()) pd->add_cmdline(valid_utf8(p.cmdline));
      if (p.rank != INT64_MIN) pd->add_process_labels("rank " + std::to_string(p.rank));
    }
  pd->set_process_name(valid_utf8(name));
  emit();
  return uuid;
}

uint64_t PerfettoWriter::thread_track(int64_t pid, int64_t tid) {
  Key key{kThread, pid, tid, 0};
  if (key == last_thread_) return last_thread_uuid_;
  last_thread_ = key;
  if (auto it = tracks_.find(key); it != tracks_.end()) return last_thread_uuid_ = it->second;
  uint64_t parent = process_track(pid);
  uint64_t uuid = last_thread_uuid_ = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_parent_uuid(parent);
  auto* th = td->mutable_thread();
  th->set_pid(static_cast<int32_t>(pid));
  th->set_tid(tid);
  auto it = thread_names_.find({pid, tid});
  th->set_thread_name(valid_utf8(it != thread_names_.end() && !it->second.empty() ? it->second
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
  pd->set_pid(static_cast<int32_t>(static_cast<uint64_t>(kGpuPidBase) + static_cast<uint64_t>(device)));
  std::string name = "GPU " + std::to_string(device);
  for (const auto& d : m_.devices())
    if (d.id == device && !d.name.empty()) name += " (" + d.name + ")";
  pd->set_process_name(valid_utf8(name));
  emit();
  return uuid;
}

uint64_t PerfettoWriter::gpuscope_track() {
  Key key{kMarks, 0, 0, 0};
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_name("gpuscope");
  emit();
  return uuid;
}

void PerfettoWriter::set_marks(const std::vector<GpuscopeMark>& marks) {
  for (const GpuscopeMark& mk : marks) {
    TimedRow r;
    r.start = mk.start;
    r.end = mk.end;
    r.name = texts_.name_of(mk.name);
    r.src = kSrcGpuscope;
    marks_.push_back(r);
  }
  std::stable_sort(marks_.begin(), marks_.end(), row_before);
}

void PerfettoWriter::set_steps(const std::optional<ExportOptions::Steps>& steps) {
  if (!steps) return;
  steps_pid_ = steps->pid;
  for (const auto& s : steps->steps) {
    TimedRow r;
    r.k1 = steps->pid;
    r.start = s.start;
    r.end = s.end;
    r.name = texts_.name_of("step " + std::to_string(s.number));
    r.src = kSrcStep;
    steps_.push_back(r);
  }
  std::stable_sort(steps_.begin(), steps_.end(), row_before);
}

uint64_t PerfettoWriter::stream_track(int64_t pid, int64_t device, int64_t stream) {
  Key key{kStream, pid, device, stream};
  if (key == last_stream_) return last_stream_uuid_;
  last_stream_ = key;
  if (auto it = tracks_.find(key); it != tracks_.end()) return last_stream_uuid_ = it->second;
  std::string name = "stream " + std::to_string(stream);
  if (stream_pids_[device] > 1) name += " (pid " + std::to_string(pid) + ")";
  return last_stream_uuid_ = child_track(key, gpu_track(device), name, static_cast<int32_t>(stream));
}

uint64_t PerfettoWriter::child_track(const Key& key, uint64_t parent, const std::string& name, int32_t order) {
  if (auto it = tracks_.find(key); it != tracks_.end()) return it->second;
  uint64_t uuid = next_uuid_++;
  tracks_[key] = uuid;
  descriptor_packet();
  auto* td = pkt_.mutable_track_descriptor();
  td->set_uuid(uuid);
  td->set_parent_uuid(parent);
  td->set_name(valid_utf8(name));
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
  td->set_name(valid_utf8(name));
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

int64_t PerfettoWriter::delta(int64_t ts) {
  ts = std::max(clamp_ts(ts), last_ts_);
  int64_t d = ts - last_ts_;
  last_ts_ = ts;
  return d;
}

void PerfettoWriter::event_packet(int64_t ts, std::string_view te) {
  // TracePacket fields in field-number order, as the generated serializer
  // writes them: timestamp (8), trusted_packet_sequence_id (10),
  // track_event (11), interned_data (12), sequence_flags (13).
  auto d = static_cast<uint64_t>(delta(ts));
  size_t body = 1 + varint_size(d) + 2 + 1 + varint_size(te.size()) + te.size() + 2;
  if (!interned_.empty()) body += 1 + varint_size(interned_.size()) + interned_.size();
  out_.room(body + 16);
  out_.put('\x0a');
  out_.put_varint(body);
  out_.put('\x40');
  out_.put_varint(d);
  out_.put('\x50');
  out_.put(static_cast<char>(kSequence));
  out_.put('\x5a');
  out_.put_varint(te.size());
  out_.put(te);
  if (!interned_.empty()) {
    out_.put('\x62');
    out_.put_varint(interned_.size());
    out_.put(interned_);
    interned_.clear();
  }
  out_.put('\x68');
  out_.put(static_cast<char>(pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE));
  out_.maybe_flush();
}

void PerfettoWriter::close_until(int64_t ts) {
  while (!open_.empty() && open_.top().end <= ts) {
    Open o = open_.top();
    open_.pop();
    auto& stack = open_by_track_[o.track];
    if (!stack.empty()) stack.pop_back();
    // TrackEvent: type (9) = SLICE_END, track_uuid (11).
    TeBytes te;
    te.byte(0x48);
    te.varint(pb::TrackEvent::TYPE_SLICE_END);
    te.byte(0x58);
    te.varint(o.track);
    event_packet(o.end, te.view());
  }
}

void PerfettoWriter::open_slice(uint64_t track, int64_t start, int64_t end, uint64_t cat, int64_t name,
                                uint64_t flow_out, uint64_t flow_in, const std::vector<size_t>* waits_out,
                                const std::vector<size_t>* waits_in, const std::vector<uint64_t>* more_out) {
  close_until(start);
  end = std::max(end, start);
  if (track >= open_by_track_.size()) open_by_track_.resize(track + 1);
  if (!open_by_track_[track].empty() && end > open_by_track_[track].back()) {
    // It would outlive its parent: on a lane of its own it closes itself.
    track = lane_track(kOverlap, static_cast<int64_t>(track), 0, start, end, track, "overlapping");
    if (track >= open_by_track_.size()) open_by_track_.resize(track + 1);
  }
  auto& stack = open_by_track_[track];
  // Then flow_ids (47, fixed64) and terminating_flow_ids (48, fixed64).
  TeBytes te;
  track_event_head(te, cat, pb::TrackEvent::TYPE_SLICE_BEGIN, name_iid(name), track);
  if (flow_out) {
    te.byte(0xF9);
    te.byte(0x02);
    te.fixed64(flow_out);
  }
  // An event waited for by more streams than fit (or work waiting for more
  // events) keeps the first arrows.
  size_t room = kMaxFixed64 - 2;
  auto wait_flows = [&](const std::vector<size_t>* waits, unsigned tag) {
    if (!waits) return;
    for (size_t i = 0; i < waits->size() && room > 0; ++i, --room) {
      const EventWaits::Wait& w = waits_.waits()[(*waits)[i]];
      te.byte(tag);
      te.byte(tag == 0xF9 ? 0x02 : 0x03);
      te.fixed64(m_.flow_id(w.pid, w.correlation));
    }
  };
  wait_flows(waits_out, 0xF9);
  if (more_out)
    for (size_t i = 0; i < more_out->size() && room > 0; ++i, --room) {
      te.byte(0xF9);
      te.byte(0x02);
      te.fixed64((*more_out)[i]);
    }
  if (flow_in) {
    te.byte(0x81);
    te.byte(0x03);
    te.fixed64(flow_in);
  }
  wait_flows(waits_in, 0x81);
  event_packet(start, te.view());
  stack.push_back(end);
  open_.push({end, track});
  ++events_;
}

void PerfettoWriter::instant(uint64_t track, int64_t ts, uint64_t cat, int64_t name) {
  close_until(ts);
  TeBytes te;
  track_event_head(te, cat, pb::TrackEvent::TYPE_INSTANT, name_iid(name), track);
  event_packet(ts, te.view());
  ++events_;
}

void PerfettoWriter::counter_value(uint64_t track, int64_t ts, double value) {
  close_until(ts);
  // TrackEvent: type (9) = COUNTER, track_uuid (11), double_counter_value (44, fixed64).
  TeBytes te;
  te.byte(0x48);
  te.varint(pb::TrackEvent::TYPE_COUNTER);
  te.byte(0x58);
  te.varint(track);
  te.byte(0xE1);
  te.byte(0x02);
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  te.fixed64(bits);
  event_packet(ts, te.view());
  ++events_;
}

}  // namespace gpuscope::formats
