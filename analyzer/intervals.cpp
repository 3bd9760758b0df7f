#include "analyzer/intervals.h"

#include <algorithm>

namespace gpuscope::analyzer {

IntervalSet IntervalSet::from(std::vector<Interval> raw) {
  std::sort(raw.begin(), raw.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  return from_sorted(raw);
}

IntervalSet IntervalSet::from_sorted(const std::vector<Interval>& raw) {
  IntervalSet s;
  s.items_.reserve(raw.size());
  for (const Interval& iv : raw) {
    if (iv.end <= iv.start) continue;
    if (!s.items_.empty() && iv.start <= s.items_.back().end)
      s.items_.back().end = std::max(s.items_.back().end, iv.end);
    else
      s.items_.push_back(iv);
  }
  s.finish();
  return s;
}

int64_t IntervalSet::total() const {
  if (!prefix_.empty()) return prefix_.back();
  int64_t t = 0;
  for (const auto& iv : items_) t += iv.end - iv.start;
  return t;
}

void IntervalSet::finish() {
  items_.shrink_to_fit();
  prefix_.resize(items_.size());
  int64_t acc = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    acc += items_[i].end - items_[i].start;
    prefix_[i] = acc;
  }
}

IntervalSet IntervalSet::unite(const IntervalSet& other, bool prefix) const {
  // Merge order of the two sorted lists, read by index: no merged copy.
  const auto& a = items_;
  const auto& b = other.items_;
  size_t i = 0, j = 0;
  auto next = [&]() -> Interval {
    if (j == b.size() || (i < a.size() && a[i].start <= b[j].start)) return a[i++];
    return b[j++];
  };
  const size_t n = a.size() + b.size();
  IntervalSet out = from_sorted_fn(n, [&](size_t k) {
    if (k == 0) i = j = 0;  // from_sorted_fn walks the sequence twice
    return next();
  }, prefix);
  return out;
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
  IntervalSet out;
  out.items_.reserve(items_.size());
  size_t j = 0;
  const auto& b = other.items_;
  for (Interval cur : items_) {
    while (j < b.size() && b[j].end <= cur.start) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < cur.end) {
      if (b[k].start > cur.start) out.items_.push_back({cur.start, b[k].start});
      cur.start = std::max(cur.start, b[k].end);
      if (cur.start >= cur.end) break;
      ++k;
    }
    if (cur.start < cur.end) out.items_.push_back(cur);
  }
  out.finish();
  return out;
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
  IntervalSet out;
  size_t i = 0, j = 0;
  const auto& a = items_;
  const auto& b = other.items_;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start), hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.items_.push_back({lo, hi});
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  out.finish();
  return out;
}

IntervalSet IntervalSet::clip(int64_t lo, int64_t hi) const {
  IntervalSet out;
  if (hi <= lo) return out;
  auto it = std::upper_bound(items_.begin(), items_.end(), lo, [](int64_t t, const Interval& iv) { return t < iv.end; });
  for (; it != items_.end() && it->start < hi; ++it)
    out.items_.push_back({std::max(it->start, lo), std::min(it->end, hi)});
  out.finish();
  return out;
}

void IntervalSet::append_clipped(int64_t lo, int64_t hi, std::vector<Interval>& out) const {
  if (hi <= lo) return;
  auto it = std::upper_bound(items_.begin(), items_.end(), lo, [](int64_t t, const Interval& iv) { return t < iv.end; });
  for (; it != items_.end() && it->start < hi; ++it) out.push_back({std::max(it->start, lo), std::min(it->end, hi)});
}

int64_t IntervalSet::covered(int64_t lo, int64_t hi) const {
  if (hi <= lo || items_.empty()) return 0;
  if (prefix_.size() != items_.size()) {  // built without prefix sums: walk
    int64_t sum = 0;
    auto it = std::upper_bound(items_.begin(), items_.end(), lo, [](int64_t t, const Interval& iv) { return t < iv.end; });
    for (; it != items_.end() && it->start < hi; ++it) sum += std::min(it->end, hi) - std::max(it->start, lo);
    return sum;
  }
  // First interval ending after lo, last one starting before hi.
  auto first = std::upper_bound(items_.begin(), items_.end(), lo, [](int64_t t, const Interval& iv) { return t < iv.end; });
  if (first == items_.end() || first->start >= hi) return 0;
  auto last = std::lower_bound(first, items_.end(), hi, [](const Interval& iv, int64_t t) { return iv.start < t; });
  size_t i = static_cast<size_t>(first - items_.begin());
  size_t k = static_cast<size_t>(last - items_.begin());  // one past the last overlapping
  int64_t sum = prefix_[k - 1] - (i ? prefix_[i - 1] : 0);
  if (first->start < lo) sum -= lo - first->start;
  if (items_[k - 1].end > hi) sum -= items_[k - 1].end - hi;
  return sum;
}

bool IntervalSet::contains(int64_t t) const {
  auto it = std::upper_bound(items_.begin(), items_.end(), t, [](int64_t v, const Interval& iv) { return v < iv.end; });
  return it != items_.end() && it->start <= t;
}

}  // namespace gpuscope::analyzer
