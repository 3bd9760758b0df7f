#include "gui/model/lod.h"

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
  levels_.clear();
  const size_t n = ev.size();
  if (n == 0) return;
  const size_t blocks = (n + kLeaf - 1) / kLeaf;
  std::vector<Node> leaves(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    const size_t first = b * kLeaf, last = std::min(n, first + kLeaf);
    Node& node = leaves[b];
    node.start = ev[first].start;
    node.end = ev[last - 1].end;
    node.busy = 0;
    node.longest = static_cast<uint32_t>(first);
    for (size_t k = first; k < last; ++k) {
      node.busy = saturating_add(node.busy, ev[k].duration());
      if (ev[k].duration() > ev[node.longest].duration()) node.longest = static_cast<uint32_t>(k);
    }
    node.longest_dur = static_cast<uint32_t>(std::min<int64_t>(ev[node.longest].duration(), UINT32_MAX));
  }
  levels_.push_back(std::move(leaves));
  while (levels_.back().size() > 1) {
    const auto& prev = levels_.back();
    const size_t m = (prev.size() + 1) / 2;
    std::vector<Node> up(m);
    for (size_t i = 0; i < m; ++i) {
      const Node& a = prev[2 * i];
      if (2 * i + 1 >= prev.size()) {
        up[i] = a;
        continue;
      }
      const Node& b = prev[2 * i + 1];
      up[i].start = a.start;
      up[i].end = b.end;
      up[i].busy = a.busy + b.busy;
      const Node& best = b.longest_dur > a.longest_dur ? b : a;
      up[i].longest = best.longest;
      up[i].longest_dur = best.longest_dur;
    }
    levels_.push_back(std::move(up));
  }
}

struct LanePyramid::Ctx {
  const std::vector<Event>& ev;
  const Window& w;
  ColumnAccum& out;
  std::vector<uint32_t>* wide;
  double wide_ns;
  double t1;
  double inv_p;
  double split_ns;

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
    const double xs = (s - w.t0) * inv_p, xe = (en - w.t0) * inv_p;
    if (en == s) {  // an instant: visible in its column, no busy time
      if (xs >= 0 && xs < w.ncols) credit(static_cast<int>(xs), 0.0, k, 0.0);
      return;
    }
    // Most events sit inside one column.
    if (xs >= 0 && xe < w.ncols && static_cast<int>(xs) == static_cast<int>(xe)) {
      credit(static_cast<int>(xs), en - s, k, en - s);
      return;
    }
    // Clamp in double first: far-away events would overflow an int.
    const double p = w.ns_per_px;
    const int cs = static_cast<int>(std::max(0.0, std::floor(xs)));
    const int ce = static_cast<int>(std::min(w.ncols - 1.0, std::ceil(xe) - 1));
    for (int c = cs; c <= ce; ++c) {
      double lo = std::max(s, w.t0 + p * c), hi = std::min(en, w.t0 + p * (c + 1));
      if (hi > lo) credit(c, hi - lo, k, hi - lo);
    }
  }
};

void LanePyramid::visit(Ctx& c, int level, size_t index) const {
  const auto& nodes = levels_[static_cast<size_t>(level)];
  if (index >= nodes.size()) return;
  const Node& node = nodes[index];
  const double s = static_cast<double>(node.start);
  const double e = static_cast<double>(node.end);
  if (e < c.w.t0 || s >= c.t1) return;
  const double p = c.w.ns_per_px;
  const double xs = (s - c.w.t0) / p;
  if (xs >= 0) {
    // The whole block inside one column: its summary is the exact answer there.
    const int cs = static_cast<int>(xs);
    if (e <= c.w.t0 + p * (cs + 1) && cs < c.w.ncols) {
      c.credit(cs, static_cast<double>(node.busy), node.longest, static_cast<double>(node.longest_dur));
      return;
    }
  }
  if (e - s < c.split_ns && xs >= 0 && e < c.t1) {
    // A sliver across one column edge (see split_px): shared in proportion.
    const int cs = static_cast<int>(xs);
    const double f = (c.w.t0 + p * (cs + 1) - s) / (e - s);
    const double busy = static_cast<double>(node.busy), longest = static_cast<double>(node.longest_dur);
    c.credit(cs, busy * f, node.longest, longest * f);
    c.credit(cs + 1, busy * (1 - f), node.longest, longest * (1 - f));
    return;
  }
  if (level == 0) {
    const size_t first = index * kLeaf, last = std::min(c.ev.size(), first + kLeaf);
    for (size_t k = first; k < last; ++k) c.add_event(static_cast<uint32_t>(k));
    return;
  }
  visit(c, level - 1, 2 * index);
  visit(c, level - 1, 2 * index + 1);
}

void LanePyramid::columns(const std::vector<Event>& events, const Window& w, ColumnAccum& out,
                          std::vector<uint32_t>* wide, double wide_px, double split_px) const {
  if (events.empty() || levels_.empty() || w.ncols <= 0) return;
  Ctx c{events, w, out, wide, wide_px * w.ns_per_px, w.t1(), 1.0 / w.ns_per_px, split_px * w.ns_per_px};
  visit(c, levels() - 1, 0);
}

int64_t LanePyramid::busy_rec(const std::vector<Event>& ev, int level, size_t index, int64_t a,
                              int64_t b) const {
  const auto& nodes = levels_[static_cast<size_t>(level)];
  if (index >= nodes.size()) return 0;
  const Node& node = nodes[index];
  if (node.end <= a || node.start >= b) return 0;
  if (node.start >= a && node.end <= b) return node.busy;
  if (level == 0) {
    int64_t sum = 0;
    const size_t first = index * kLeaf, last = std::min(ev.size(), first + kLeaf);
    for (size_t k = first; k < last; ++k) {
      int64_t lo = std::max(ev[k].start, a), hi = std::min(ev[k].end, b);
      if (hi > lo) sum += hi - lo;
    }
    return sum;
  }
  return busy_rec(ev, level - 1, 2 * index, a, b) + busy_rec(ev, level - 1, 2 * index + 1, a, b);
}

int64_t LanePyramid::busy_in(const std::vector<Event>& events, int64_t a, int64_t b) const {
  if (events.empty() || levels_.empty() || b <= a) return 0;
  return busy_rec(events, levels() - 1, 0, a, b);
}

size_t LanePyramid::first_ending_after(const std::vector<Event>& events, int64_t t) {
  auto it = std::partition_point(events.begin(), events.end(),
                                 [t](const Event& e) { return e.end <= t; });
  return static_cast<size_t>(it - events.begin());
}

size_t LanePyramid::memory_bytes() const {
  size_t bytes = 0;
  for (const auto& l : levels_) bytes += l.size() * sizeof(Node);
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
