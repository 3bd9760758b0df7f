// Number pieces for JSON exporters (Kineto-style microseconds, shortest
// doubles) and the check for embeddable JSON text; strings are escaped by
// append_json_string (common/text.h).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuscope::formats {

// True when s is one complete JSON value, valid UTF-8, with no raw control
// bytes: safe to embed verbatim (shapes and dtypes stored as JSON text).
bool is_embeddable_json(std::string_view s);

inline void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Nanoseconds as microseconds with three decimals, as Kineto writes `ts` and `dur`.
inline void append_us(std::string& out, int64_t ns) {
  char buf[32];
  char* p = buf;
  uint64_t u;
  if (ns < 0) {
    *p++ = '-';
    u = static_cast<uint64_t>(-(ns + 1)) + 1;
  } else {
    u = static_cast<uint64_t>(ns);
  }
  p = std::to_chars(p, buf + sizeof buf, u / 1000).ptr;
  unsigned frac = static_cast<unsigned>(u % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + frac / 100);
  p[2] = static_cast<char>('0' + frac / 10 % 10);
  p[3] = static_cast<char>('0' + frac % 10);
  out.append(buf, p + 4);
}

// Finite doubles in shortest round-trip form; non-finite ones as 0.
void append_double(std::string& out, double v);

}  // namespace gpuscope::formats
