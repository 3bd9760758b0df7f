// Sorted, disjoint time intervals and the set algebra the breakdown and the
// idle attribution are built from. Every operation is linear or logarithmic so
// that millions of kernels stay cheap.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuscope::analyzer {

struct Interval {
  int64_t start = 0, end = 0;
};

// Sorted by start, disjoint, each non-empty.
class IntervalSet {
 public:
  IntervalSet() = default;
  // Takes any intervals (unsorted, overlapping, empty ones ignored) and merges them.
  static IntervalSet from(std::vector<Interval> raw);
  // Takes intervals already sorted by start (overlaps allowed), merging in one pass.
  static IntervalSet from_sorted(const std::vector<Interval>& raw);

  // Builds from n intervals get(0..n-1), sorted by start, without a copy; an
  // empty interval from get() is skipped. Two passes: the first counts, so the
  // result is allocated once at its exact size. Without `prefix`, covered() walks.
  template <class Get>
  static IntervalSet from_sorted_fn(size_t n, Get get, bool prefix = true) {
    IntervalSet s;
    size_t count = 0;
    int64_t end = INT64_MIN;
    for (size_t i = 0; i < n; ++i) {
      const Interval iv = get(i);
      if (iv.end <= iv.start) continue;
      if (count == 0 || iv.start > end) {
        ++count;
        end = iv.end;
      } else {
        end = std::max(end, iv.end);
      }
    }
    s.items_.reserve(count);
    for (size_t i = 0; i < n; ++i) {
      const Interval iv = get(i);
      if (iv.end <= iv.start) continue;
      if (!s.items_.empty() && iv.start <= s.items_.back().end) {
        if (iv.end > s.items_.back().end) s.items_.back().end = iv.end;
      } else {
        s.items_.push_back(iv);
      }
    }
    if (prefix) s.finish();
    return s;
  }

  IntervalSet unite(const IntervalSet& other, bool prefix = true) const;
  IntervalSet subtract(const IntervalSet& other) const;
  IntervalSet intersect(const IntervalSet& other) const;
  IntervalSet clip(int64_t lo, int64_t hi) const;
  // Appends the parts inside [lo, hi) to `out`, in order.
  void append_clipped(int64_t lo, int64_t hi, std::vector<Interval>& out) const;

  // Covered time inside [lo, hi): O(log n).
  int64_t covered(int64_t lo, int64_t hi) const;
  int64_t total() const;
  bool contains(int64_t t) const;
  const std::vector<Interval>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }

 private:
  void finish();  // builds prefix sums
  std::vector<Interval> items_;
  std::vector<int64_t> prefix_;  // prefix_[i] = covered time of items_[0..i]
};

}  // namespace gpuscope::analyzer
