#include "model/lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuscope::gui {

void ColumnAccum::reset(int ncols) {
  busy.assign(static_cast<size_t>(ncols), 0.0);
  dominant.assign(static_cast<size_t>(ncols), kNoEvent);
  share.assign(static_cast<size_t>(ncols), -1.0);
}

void LanePyramid::build(const std::vector<Event>& ev) {
  busy_.clear();
  longest_.clear();
  const size_t n = ev.size();
  if (n == 0) return;
  const size_t blocks = (n + kLeaf - 1) / kLeaf;
  std::vector<int64_t> busy(blocks);
  std::vector<uint32_t> longest(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    size_t first = b * kLeaf, last = std::min(n, first + kLeaf);
    int64_t sum = 0;
    uint32_t best = static_cast<uint32_t>(first);
    for (size_t k = first; k < last; ++k) {
      sum += ev[k].duration();
      if (ev[k].duration() > ev[best].duration()) best = static_cast<uint32_t>(k);
    }
    busy[b] = sum;
    longest[b] = best;
  }
  busy_.push_back(std::move(busy));
  longest_.push_back(std::move(longest));
  while (busy_.back().size() > 1) {
    const auto& pb = busy_.back();
    const auto& pl = longest_.back();
    size_t m = (pb.size() + 1) / 2;
    std::vector<int64_t> nb(m);
    std::vector<uint32_t> nl(m);
    for (size_t i = 0; i < m; ++i) {
      size_t a = 2 * i, b = std::min(2 * i + 1, pb.size() - 1);
      nb[i] = pb[a] + (b != a ? pb[b] : 0);
      nl[i] = ev[pl[b]].duration() > ev[pl[a]].duration() ? pl[b] : pl[a];
    }
    busy_.push_back(std::move(nb));
    longest_.push_back(std::move(nl));
  }
}

struct LanePyramid::Ctx {
  const std::vector<Event>& ev;
  const Window& w;
  ColumnAccum& out;
  std::vector<uint32_t>* wide;
  double wide_ns;
  double t1;

  void credit(int c, double ns, uint32_t who, double share) {
    out.busy[static_cast<size_t>(c)] += ns;
    if (share > out.share[static_cast<size_t>(c)]) {
      out.share[static_cast<size_t>(c)] = share;
      out.dominant[static_cast<size_t>(c)] = who;
    }
  }

  void add_event(uint32_t k) {
    const Event& e = ev[k];
    const double s = static_cast<double>(e.start), en = static_cast<double>(e.end);
    if (en < w.t0 || s >= t1) return;
    if (wide && en - s >= wide_ns) {
      wide->push_back(k);
      return;
    }
    const double p = w.ns_per_px;
    // Clamp in double first: far-away events would overflow an int.
    const int cs = static_cast<int>(std::max(0.0, std::floor((s - w.t0) / p)));
    const int ce = static_cast<int>(std::min(w.ncols - 1.0, std::ceil((en - w.t0) / p) - 1));
    if (en == s) {  // an instant: visible in its column, no busy time
      if (cs < w.ncols) credit(cs, 0.0, k, 0.0);
      return;
    }
    for (int c = cs; c <= ce; ++c) {
      double lo = std::max(s, w.t0 + p * c), hi = std::min(en, w.t0 + p * (c + 1));
      if (hi > lo) credit(c, hi - lo, k, hi - lo);
    }
  }
};

void LanePyramid::visit(Ctx& c, int level, size_t node) const {
  const size_t n = c.ev.size();
  const size_t span = static_cast<size_t>(kLeaf) << level;
  const size_t first = node * span;
  if (first >= n) return;
  const size_t last = std::min(n, first + span) - 1;
  const double s = static_cast<double>(c.ev[first].start);
  const double e = static_cast<double>(c.ev[last].end);
  if (e < c.w.t0 || s >= c.t1) return;
  const double p = c.w.ns_per_px;
  const double xs = (s - c.w.t0) / p;
  if (xs >= 0) {
    // The whole block inside one column: its summary is the exact answer there.
    const int cs = static_cast<int>(xs);
    const double col_end = c.w.t0 + p * (cs + 1);
    if (e <= col_end && cs < c.w.ncols) {
      uint32_t who = longest_[static_cast<size_t>(level)][node];
      c.credit(cs, static_cast<double>(busy_[static_cast<size_t>(level)][node]), who,
               static_cast<double>(c.ev[who].duration()));
      return;
    }
  }
  if (level == 0) {
    for (size_t k = first; k <= last; ++k) c.add_event(static_cast<uint32_t>(k));
    return;
  }
  visit(c, level - 1, 2 * node);
  visit(c, level - 1, 2 * node + 1);
}

void LanePyramid::columns(const std::vector<Event>& events, const Window& w, ColumnAccum& out,
                          std::vector<uint32_t>* wide, double wide_px) const {
  if (events.empty() || busy_.empty() || w.ncols <= 0) return;
  Ctx c{events, w, out, wide, wide_px * w.ns_per_px, w.t1()};
  visit(c, levels() - 1, 0);
}

int64_t LanePyramid::busy_rec(const std::vector<Event>& ev, int level, size_t node, int64_t a,
                              int64_t b) const {
  const size_t n = ev.size();
  const size_t span = static_cast<size_t>(kLeaf) << level;
  const size_t first = node * span;
  if (first >= n) return 0;
  const size_t last = std::min(n, first + span) - 1;
  if (ev[last].end <= a || ev[first].start >= b) return 0;
  if (ev[first].start >= a && ev[last].end <= b) return busy_[static_cast<size_t>(level)][node];
  if (level == 0) {
    int64_t sum = 0;
    for (size_t k = first; k <= last; ++k) {
      int64_t lo = std::max(ev[k].start, a), hi = std::min(ev[k].end, b);
      if (hi > lo) sum += hi - lo;
    }
    return sum;
  }
  return busy_rec(ev, level - 1, 2 * node, a, b) + busy_rec(ev, level - 1, 2 * node + 1, a, b);
}

int64_t LanePyramid::busy_in(const std::vector<Event>& events, int64_t a, int64_t b) const {
  if (events.empty() || busy_.empty() || b <= a) return 0;
  return busy_rec(events, levels() - 1, 0, a, b);
}

size_t LanePyramid::first_ending_after(const std::vector<Event>& events, int64_t t) {
  auto it = std::partition_point(events.begin(), events.end(),
                                 [t](const Event& e) { return e.end <= t; });
  return static_cast<size_t>(it - events.begin());
}

size_t LanePyramid::memory_bytes() const {
  size_t bytes = 0;
  for (const auto& l : busy_) bytes += l.size() * (sizeof(int64_t) + sizeof(uint32_t));
  return bytes;
}

// ---------------------------------------------------------------------------

void CounterPyramid::build(const std::vector<CounterSample>& s) {
  min_.clear();
  max_.clear();
  if (s.empty()) return;
  const size_t blocks = (s.size() + kLeaf - 1) / kLeaf;
  std::vector<double> lo(blocks, std::numeric_limits<double>::infinity());
  std::vector<double> hi(blocks, -std::numeric_limits<double>::infinity());
  for (size_t k = 0; k < s.size(); ++k) {
    lo[k / kLeaf] = std::min(lo[k / kLeaf], s[k].value);
    hi[k / kLeaf] = std::max(hi[k / kLeaf], s[k].value);
  }
  min_.push_back(std::move(lo));
  max_.push_back(std::move(hi));
  while (min_.back().size() > 1) {
    const auto& pl = min_.back();
    const auto& ph = max_.back();
    size_t m = (pl.size() + 1) / 2;
    std::vector<double> nl(m), nh(m);
    for (size_t i = 0; i < m; ++i) {
      size_t a = 2 * i, b = std::min(2 * i + 1, pl.size() - 1);
      nl[i] = std::min(pl[a], pl[b]);
      nh[i] = std::max(ph[a], ph[b]);
    }
    min_.push_back(std::move(nl));
    max_.push_back(std::move(nh));
  }
}

void CounterPyramid::range_minmax(const std::vector<CounterSample>& s, size_t i, size_t j,
                                  double& lo, double& hi) const {
  while (i < j) {
    if (i % kLeaf == 0 && i + kLeaf <= j) {
      int level = 0;
      while (static_cast<size_t>(level + 1) < min_.size() &&
             i % (static_cast<size_t>(kLeaf) << (level + 1)) == 0 &&
             i + (static_cast<size_t>(kLeaf) << (level + 1)) <= j)
        ++level;
      size_t node = i / (static_cast<size_t>(kLeaf) << level);
      lo = std::min(lo, min_[static_cast<size_t>(level)][node]);
      hi = std::max(hi, max_[static_cast<size_t>(level)][node]);
      i += static_cast<size_t>(kLeaf) << level;
    } else {
      lo = std::min(lo, s[i].value);
      hi = std::max(hi, s[i].value);
      ++i;
    }
  }
}

void CounterPyramid::columns(const std::vector<CounterSample>& s, const Window& w,
                             std::vector<double>& lo, std::vector<double>& hi) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  lo.assign(static_cast<size_t>(std::max(w.ncols, 0)), nan);
  hi.assign(lo.size(), nan);
  if (s.empty() || min_.empty()) return;
  auto ts_less = [](const CounterSample& a, double t) { return static_cast<double>(a.ts) < t; };
  // Index of the first sample at or after the column start.
  size_t next = static_cast<size_t>(std::lower_bound(s.begin(), s.end(), w.t0, ts_less) - s.begin());
  for (int c = 0; c < w.ncols; ++c) {
    const double a = w.t0 + w.ns_per_px * c, b = a + w.ns_per_px;
    size_t end = static_cast<size_t>(
        std::lower_bound(s.begin() + static_cast<long>(next), s.end(), b, ts_less) - s.begin());
    double l = std::numeric_limits<double>::infinity(), h = -l;
    if (next > 0) l = h = s[next - 1].value;  // the value carried into the column
    range_minmax(s, next, end, l, h);
    if (l <= h) {
      lo[static_cast<size_t>(c)] = l;
      hi[static_cast<size_t>(c)] = h;
    }
    next = end;
  }
}

}  // namespace gpuscope::gui
