// Arithmetic on recorded times and totals that stays defined for any int64 a
// database may hold (a damaged or foreign file included). Our writers keep
// times within ±kMaxTimeNs of the origin; readers drop (analyzer) or clamp
// (viewer) what lies beyond, and sum or subtract without overflow.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpuscope {

// Timestamps further than this from the recording's origin (13 days) are corrupt.
inline constexpr int64_t kMaxTimeNs = int64_t{1} << 50;

inline int64_t clamp_time(int64_t t) { return std::clamp(t, -kMaxTimeNs, kMaxTimeNs); }

// end - start in ns, 0 when reversed, held at INT64_MAX instead of overflowing.
inline int64_t span_ns(int64_t start, int64_t end) {
  if (end <= start) return 0;
  const uint64_t d = static_cast<uint64_t>(end) - static_cast<uint64_t>(start);
  return d > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(d);
}

// a + b, held at the int64 limits instead of overflowing (byte and time totals).
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

// a - b, held at the int64 limits instead of overflowing.
inline int64_t saturating_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return a < b ? INT64_MIN : INT64_MAX;
  return r;
}

}  // namespace gpuscope
