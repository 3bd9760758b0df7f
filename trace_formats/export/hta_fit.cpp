#include "trace_formats/export/hta_fit.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace gpuscope::formats {

namespace {

// Beyond 2^53 ns the written microseconds are no exact doubles: left as they are.
constexpr int64_t kExact = int64_t{1} << 53;

int64_t floor_us(int64_t ns) { return ns >= 0 ? ns / 1000 : -((999 - ns) / 1000); }

}  // namespace

bool hta_negative(int64_t start, int64_t end) {
  if (std::abs(start) >= kExact || std::abs(end) >= kExact) return false;
  const int64_t us = floor_us(start);
  return start != us * 1000 && end < (us + 1) * 1000;
}

HtaFit::HtaFit(const std::vector<std::pair<int64_t, int64_t>>& spans, std::vector<int64_t> fixed,
               std::vector<int64_t> soft) {
  std::sort(fixed.begin(), fixed.end());
  std::sort(soft.begin(), soft.end());
  // The events to fit, by microsecond: their offsets in it.
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_us;
  for (const auto& [s, e] : spans)
    if (hta_negative(s, std::max(s, e))) {
      const int64_t us = floor_us(s);
      by_us[us].push_back({s - us * 1000, std::max(s, e) - us * 1000});
    }
  // Whether `points` has one in [base + from, base + to].
  auto any_in = [](const std::vector<int64_t>& points, int64_t base, int64_t from, int64_t to) {
    auto it = std::lower_bound(points.begin(), points.end(), base + from);
    return it != points.end() && *it <= base + to;
  };
  for (const auto& [us, events] : by_us) {
    const int64_t base = us * 1000;
    Move m{us};
    if (!any_in(fixed, base, 1, 999) && !any_in(soft, base, 1, 999)) {
      // All one way: the side that moves the points less.
      int64_t last_start = 0, first_end = 1000;
      for (const auto& [s, e] : events) {
        last_start = std::max(last_start, s);
        first_end = std::min(first_end, e);
      }
      if (last_start <= 1000 - first_end) m.left = last_start;
      else m.right = first_end;
      moves_.push_back(m);
      continue;
    }
    for (const auto& [s, e] : events) {
      // To the microsecond's beginning, or its end, without moving a point
      // across a fixed one; across a soft one where nothing else fits.
      const bool hard_left = !any_in(fixed, base, 1, s), hard_right = !any_in(fixed, base, e, 999);
      const bool clean_left = hard_left && !any_in(soft, base, 1, s);
      const bool clean_right = hard_right && !any_in(soft, base, e, 999);
      bool left;
      if (clean_left || clean_right) left = clean_left;
      else if (hard_left && hard_right) left = s <= 1000 - e;
      else if (hard_left || hard_right) left = hard_left;
      else {
        ++unfixed_;
        continue;
      }
      if (left) m.left = std::max(m.left, s);
      else m.right = m.right < 0 ? e : std::min(m.right, e);
    }
    moves_.push_back(m);
  }
}

int64_t HtaFit::operator()(int64_t ns) const {
  if (moves_.empty() || std::abs(ns) >= kExact) return ns;
  const int64_t us = floor_us(ns), off = ns - us * 1000;
  if (off == 0) return ns;
  auto it = std::lower_bound(moves_.begin(), moves_.end(), us, [](const Move& m, int64_t u) { return m.us < u; });
  if (it == moves_.end() || it->us != us) return ns;
  if (it->left >= 0 && off <= it->left) return us * 1000;
  if (it->right >= 0 && off >= it->right) return (us + 1) * 1000;
  return ns;
}

}  // namespace gpuscope::formats
