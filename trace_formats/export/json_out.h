// JSON pieces written straight into an OutBuffer: integers, Kineto's
// microseconds, doubles and escaped strings.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "trace_formats/common/text.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/export/out_buffer.h"

namespace gpuscope::formats {

class JsonOut : public OutBuffer {
 public:
  using OutBuffer::OutBuffer;

  void put_int(int64_t v) { set_pos(std::to_chars(pos(), pos() + 24, v).ptr); }
  // Nanoseconds as microseconds with three decimals, as Kineto writes `ts` and `dur`.
  void put_us(int64_t ns) {
    char* p = pos();
    uint64_t u;
    if (ns < 0) {
      *p++ = '-';
      u = static_cast<uint64_t>(-(ns + 1)) + 1;
    } else {
      u = static_cast<uint64_t>(ns);
    }
    p = std::to_chars(p, p + 24, u / 1000).ptr;
    unsigned frac = static_cast<unsigned>(u % 1000);
    p[0] = '.';
    p[1] = static_cast<char>('0' + frac / 100);
    p[2] = static_cast<char>('0' + frac / 10 % 10);
    p[3] = static_cast<char>('0' + frac % 10);
    set_pos(p + 4);
  }
  // Shortest round-trip form, as append_double. The same few values recur
  // (blocks per SM of the same launch shapes), and formatting one costs
  // hundreds of instructions: a small direct-mapped cache keeps them.
  void put_double(double v) {
    if (!std::isfinite(v)) v = 0;
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    CachedDouble& c = doubles_[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kDoubleCacheBits)];
    if (c.len == 0 || c.bits != bits) {
      c.bits = bits;
      c.len = static_cast<uint8_t>(std::to_chars(c.text, c.text + sizeof c.text, v).ptr - c.text);
    }
    // A fixed-size copy is one move; the excess lands in the buffer's tail
    // or is overwritten by what follows.
    static_assert(sizeof c.text <= kTail);
    std::memcpy(pos(), c.text, sizeof c.text);
    set_pos(pos() + c.len);
  }
  // Escapes s as a JSON string literal; room() must cover 6 * s.size() + 2.
  void put_json_string(std::string_view s) {
    scratch_.clear();
    append_json_string(scratch_, s);
    put(scratch_);
  }

 private:
  static constexpr int kDoubleCacheBits = 8;
  struct CachedDouble {
    uint64_t bits = 0;
    char text[31];
    uint8_t len = 0;
  };

  std::string scratch_;
  CachedDouble doubles_[1 << kDoubleCacheBits];
};

}  // namespace gpuscope::formats
