// The output buffer of the exporters: a fixed block filled through a raw
// pointer and handed to the OutputFile when full. std::string appends cost a
// capacity check and a call per piece, which was a fifth of the Chrome export.
//
// Callers reserve room once per event (`room`), for the variable-length
// parts they know (names) plus kEventSlack for everything else, and then
// write without checks. Nothing is flushed inside an event, so positions
// taken while writing one stay valid until the next `room`.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "trace_formats/export/output_file.h"

namespace gpuscope::formats {

class OutBuffer {
 public:
  // More than any event writes besides the lengths passed to room().
  static constexpr size_t kEventSlack = 4096;

  explicit OutBuffer(OutputFile& out) : out_(out) { reallocate(kBlock + kEventSlack); }

  // Makes room for `n` more bytes, flushing what is buffered when needed.
  void room(size_t n) {
    if (static_cast<size_t>(end_ - p_) >= n) return;
    flush();
    if (static_cast<size_t>(end_ - p_) < n) reallocate(n + kEventSlack);
  }
  void flush() {
    out_.write(std::string_view(data_.get(), static_cast<size_t>(p_ - data_.get())));
    p_ = data_.get();
  }
  // Flushes once a block is full; call between events.
  void maybe_flush() {
    if (static_cast<size_t>(p_ - data_.get()) >= kBlock) flush();
  }

  char* pos() { return p_; }
  void set_pos(char* p) { p_ = p; }

  template <size_t N>
  void lit(const char (&s)[N]) {
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  void put(char c) { *p_++ = c; }
  void put(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // Protobuf base-128 varint.
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  // Protobuf fixed64/double: 8 bytes little-endian (the hosts we build for).
  void put_fixed64(uint64_t v) {
    std::memcpy(p_, &v, 8);
    p_ += 8;
  }

 protected:
  // Bytes past end_ that writers may overrun by (see JsonOut::put_double).
  static constexpr size_t kTail = 64;

 private:
  static constexpr size_t kBlock = size_t{1} << 20;

  void reallocate(size_t capacity) {
    size_t used = data_ ? static_cast<size_t>(p_ - data_.get()) : 0;
    auto next = std::make_unique<char[]>(capacity + kTail);
    if (used) std::memcpy(next.get(), data_.get(), used);
    data_ = std::move(next);
    p_ = data_.get() + used;
    end_ = data_.get() + capacity;
  }

  OutputFile& out_;
  std::unique_ptr<char[]> data_;
  char* p_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace gpuscope::formats
