// A JSON array writer into a caller-owned, fixed-size buffer: no allocation on
// the op path. When an element does not fit, the array is cut before it and
// still closed, so the text stays valid JSON (shapes of ops with huge tensor
// lists are truncated, never corrupt).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace gpuscope::torch_plugin {

class JsonBuffer {
 public:
  // Keeps room for the closing brackets of this many open levels.
  static constexpr size_t kReserve = 8;

  JsonBuffer(char* data, size_t capacity)
      : data_(data), total_(capacity), cap_(capacity > kReserve ? capacity - kReserve : 0) {}

  // Array elements: take a mark() before one, and when !ok() after it,
  // rollback(mark) drops it and full() tells the caller to stop.
  size_t mark() const { return size_; }
  bool ok() const { return !overflow_; }
  void rollback(size_t mark) {
    size_ = mark;
    overflow_ = false;
    full_ = true;
  }
  bool full() const { return full_; }

  void put(char c) {
    if (size_ < cap_) data_[size_++] = c;
    else overflow_ = true;
  }
  void put(std::string_view s) {
    if (size_ + s.size() <= cap_) {
      std::memcpy(data_ + size_, s.data(), s.size());
      size_ += s.size();
    } else {
      overflow_ = true;
    }
  }
  void put_int(int64_t v) {
    char tmp[24];
    auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
    (void)ec;
    put(std::string_view(tmp, static_cast<size_t>(end - tmp)));
  }
  // A JSON string; dtype names are plain, but escape anyway.
  void put_string(std::string_view s) {
    put('"');
    for (char c : s) {
      if (c == '"' || c == '\\') put('\\');
      if (static_cast<unsigned char>(c) < 0x20) continue;
      put(c);
    }
    put('"');
  }
  // The outermost closing bracket uses the reserve, so it always fits.
  void close(char c) {
    if (size_ < total_) data_[size_++] = c;
  }

  size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }

 private:
  char* data_;
  size_t total_;
  size_t cap_;
  size_t size_ = 0;
  bool overflow_ = false;
  bool full_ = false;
};

}  // namespace gpuscope::torch_plugin
