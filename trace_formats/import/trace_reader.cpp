#include "trace_formats/import/trace_reader.h"

#include <cstring>
#include <vector>

#include "trace_formats/common/error.h"

namespace gpuscope::formats {

namespace {

using json::Cursor;
using json::Kind;

constexpr size_t kMaxWindow = size_t{256} << 20;

struct ShapeError {
  std::string what;
};

int64_t int_value(Cursor& c) {
  if (c.peek_kind() == Kind::kNumber && !c.bare_word()) return c.number().to_int64();
  c.skip_value();
  return kAbsent;
}

std::string text_value(Cursor& c, json::Scratch& s) {
  if (c.peek_kind() == Kind::kString) return std::string(c.string(s));
  c.skip_value();
  return {};
}

void parse_devices(Cursor& c, json::Scratch& s, std::vector<DeviceProps>& out) {
  if (c.peek_kind() != Kind::kArray) {
    c.skip_value();
    return;
  }
  c.expect('[');
  if (c.consume(']')) return;
  do {
    if (c.peek_kind() != Kind::kObject) {
      c.skip_value();
      continue;
    }
    DeviceProps d;
    c.expect('{');
    if (!c.consume('}')) {
      do {
        std::string_view k = c.string(s);
        c.expect(':');
        if (k == "id") d.id = int_value(c);
        else if (k == "name") d.name = text_value(c, s);
        else if (k == "uuid") d.uuid = text_value(c, s);
        else if (k == "totalGlobalMem") d.total_memory = int_value(c);
        else if (k == "computeMajor") d.compute_major = int_value(c);
        else if (k == "computeMinor") d.compute_minor = int_value(c);
        else if (k == "numSms") d.sm_count = int_value(c);
        else if (k == "memoryBandwidth") d.memory_bandwidth = int_value(c);
        else if (k == "clockRateKhz") d.core_clock_khz = int_value(c);
        else c.skip_value();
      } while (c.next_member('}'));
    }
    for (int64_t* v : {&d.total_memory, &d.compute_major, &d.compute_minor, &d.sm_count,
                       &d.memory_bandwidth, &d.core_clock_khz})
      if (*v == kAbsent) *v = 0;
    out.push_back(std::move(d));
  } while (c.next_member(']'));
}

DistributedInfo parse_distributed(Cursor& c, json::Scratch& s) {
  DistributedInfo info;
  if (c.peek_kind() != Kind::kObject) {
    c.skip_value();
    return info;
  }
  c.expect('{');
  if (c.consume('}')) return info;
  do {
    std::string_view k = c.string(s);
    c.expect(':');
    if (k == "rank") info.rank = int_value(c);
    else if (k == "world_size") info.world_size = int_value(c);
    else if (k == "backend") info.backend = text_value(c, s);
    else c.skip_value();
  } while (c.next_member('}'));
  return info;
}

class Reader {
 public:
  Reader(ByteSource& src, TraceSink& sink, const std::function<void(const ReadProgress&)>& progress, size_t window)
      : src_(src), sink_(sink), progress_(progress), buf_(std::max<size_t>(window, 16)) {}

  ReadResult run();

 private:
  enum class State { kStart, kObjectFirst, kObjectKey, kObjectNext, kEventsFirst, kEvent, kEventsNext, kDone };

  void refill();
  // Parses one unit at lo_; returns false when the input is complete.
  bool step(Cursor& c);

  ByteSource& src_;
  TraceSink& sink_;
  const std::function<void(const ReadProgress&)>& progress_;
  std::vector<char> buf_;
  size_t lo_ = 0, hi_ = 0;
  uint64_t base_ = 0;  // input offset of buf_[0]
  bool eof_ = false;
  State state_ = State::kStart;
  bool in_object_ = false, saw_events_ = false;
  ReadResult result_;
  TraceEvent event_;
  json::Scratch scratch_;
  std::vector<DeviceProps> devices_;
};

void Reader::refill() {
  if (lo_ > 0) {
    std::memmove(buf_.data(), buf_.data() + lo_, hi_ - lo_);
    hi_ -= lo_;
    base_ += lo_;
    lo_ = 0;
  }
  if (hi_ == buf_.size()) {
    if (buf_.size() >= kMaxWindow)
      throw Error(src_.name() + ": a JSON value at byte " + std::to_string(base_) +
                  " is larger than 256 MiB; not a torch.profiler trace");
    buf_.resize(buf_.size() * 2);
  }
  while (hi_ < buf_.size()) {
    size_t n = src_.read(buf_.data() + hi_, buf_.size() - hi_);
    if (n == 0) {
      eof_ = true;
      break;
    }
    hi_ += n;
    result_.bytes += n;
  }
}

bool Reader::step(Cursor& c) {
  switch (state_) {
    case State::kStart: {
      char ch = c.peek();
      if (ch == '{') {
        ++c.p;
        in_object_ = true;
        state_ = State::kObjectFirst;
      } else if (ch == '[') {
        ++c.p;
        result_.top_level_array = true;
        saw_events_ = true;
        state_ = State::kEventsFirst;
      } else if (ch == '"' || ch == '-' || (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' || ch == 'n') {
        c.skip_value();  // a syntax error here means it is not JSON at all
        throw ShapeError{"JSON of another shape (a bare value, not an object or array of events)"};
      } else {
        c.fail("not JSON");
      }
      return true;
    }
    case State::kObjectFirst:
      state_ = c.consume('}') ? State::kDone : State::kObjectKey;
      return true;
    case State::kObjectKey: {
      std::string_view key = c.string(scratch_);
      c.expect(':');
      if (key == "traceEvents") {
        if (c.peek() != '[') throw ShapeError{"\"traceEvents\" is not an array"};
        ++c.p;
        saw_events_ = true;
        state_ = State::kEventsFirst;
        return true;
      }
      if (key == "deviceProperties") {
        devices_.clear();
        parse_devices(c, scratch_, devices_);
        for (const auto& d : devices_) sink_.on_device(d);
      } else if (key == "distributedInfo") {
        sink_.on_distributed(parse_distributed(c, scratch_));
      } else if (key == "baseTimeNanoseconds") {
        int64_t v = int_value(c);
        if (v != kAbsent) sink_.on_base_time(v);
      } else {
        Kind k = c.peek_kind();
        if (k == Kind::kString) sink_.on_top_level(key, c.string(scratch_));
        else if (k == Kind::kNumber && !c.bare_word()) sink_.on_top_level(key, c.number().text);
        else c.skip_value();
      }
      state_ = State::kObjectNext;
      return true;
    }
    case State::kObjectNext:
      state_ = c.next_member('}') ? State::kObjectKey : State::kDone;
      return true;
    case State::kEventsFirst:
      if (c.consume(']')) state_ = in_object_ ? State::kObjectNext : State::kDone;
      else state_ = State::kEvent;
      return true;
    case State::kEvent: {
      if (c.peek() != '{')
        throw ShapeError{"traceEvents[" + std::to_string(result_.elements) + "] is not an object"};
      parse_trace_event(c, scratch_, event_);
      lo_ = static_cast<size_t>(c.p - buf_.data());  // commit before the sink sees it
      ++result_.elements;
      sink_.on_event(event_);
      if (progress_ && (result_.elements & 0xFFFF) == 0)
        progress_({src_.raw_position(), src_.raw_size(), result_.elements});
      state_ = State::kEventsNext;
      return true;
    }
    case State::kEventsNext:
      if (c.next_member(']')) state_ = State::kEvent;
      else state_ = in_object_ ? State::kObjectNext : State::kDone;
      return true;
    case State::kDone: {
      while (c.p < buf_.data() + hi_) {
        char ch = *c.p;
        if (ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') c.fail("trailing data after the JSON value");
        ++c.p;
      }
      if (!eof_) c.more();
      return false;
    }
  }
  return false;
}

ReadResult Reader::run() {
  refill();
  if (hi_ == 0) throw Error(src_.name() + ": no data (empty after decompression)");
  // A UTF-8 byte-order mark before the JSON (editors on Windows write one), plain or
  // inside the gzip stream alike: skipped, as the format sniffer skips it.
  if (hi_ >= 3 && std::memcmp(buf_.data(), "\xef\xbb\xbf", 3) == 0) lo_ = 3;
  for (;;) {
    try {
      for (;;) {
        scratch_.reset();
        Cursor c(buf_.data() + lo_, buf_.data() + hi_, eof_, base_ + lo_);
        bool more = step(c);
        lo_ = static_cast<size_t>(c.p - buf_.data());
        if (!more) break;
      }
      break;
    } catch (const json::NeedMore&) {
      refill();
    } catch (const json::SyntaxError& e) {
      if (e.what.rfind("unexpected end", 0) == 0)
        throw Error(src_.name() + ": truncated JSON (the data ends at byte " + std::to_string(e.offset) +
                    " inside a value)");
      throw Error(src_.name() + ": not valid JSON at byte " + std::to_string(e.offset) + ": " + e.what);
    } catch (const ShapeError& e) {
      throw Error(src_.name() + ": not a torch.profiler trace: " + e.what);
    }
  }
  if (!saw_events_)
    throw Error(src_.name() + ": not a torch.profiler trace: JSON of another shape (an object without \"traceEvents\")");
  return result_;
}

}  // namespace

ReadResult read_chrome_trace(ByteSource& src, TraceSink& sink,
                             const std::function<void(const ReadProgress&)>& progress, size_t window) {
  Reader r(src, sink, progress, window);
  return r.run();
}

}  // namespace gpuscope::formats
