// Level-of-detail summaries. A lane's events are sorted and never overlap, so a
// block of consecutive events covers one time interval; LanePyramid stores, for
// blocks of 16, 32, 64, ... events, their busy time and their longest event.
// Rendering a pixel row walks the pyramid top-down and stops at the first block
// that fits in one pixel column, so a frame costs O(columns * log events)
// whatever the zoom, and the busy time per column is exact (not sampled).
#pragma once

#include <cstdint>
#include <vector>

#include "gui/model/event.h"

namespace gpuscope::gui {

inline constexpr uint32_t kNoEvent = UINT32_MAX;

// Per pixel column of one lane: busy ns and the event with the largest share.
struct ColumnAccum {
  std::vector<double> busy;
  std::vector<uint32_t> dominant;
  std::vector<double> share;
  void reset(int ncols);
};

// A view window: column c covers [t0 + c * ns_per_px, t0 + (c + 1) * ns_per_px).
struct Window {
  double t0 = 0;
  double ns_per_px = 1;
  int ncols = 0;
  double t1() const { return t0 + ns_per_px * ncols; }
};

class LanePyramid {
 public:
  static constexpr uint32_t kLeaf = 16;  // events per leaf block

  void build(const std::vector<Event>& events);

  // Accumulates the busy time of `events` in `w` into `out` (sized w.ncols).
  // When `wide` is given, events at least `wide_px` columns long are appended to
  // it (by index) instead, so the caller draws them as boxes with labels.
  // Exact by default. With `split_px` > 0, a block narrower than that many
  // columns that straddles a column edge has its busy time split in proportion
  // instead of being opened: a column's busy time is then off by less than
  // split_px of its width, and a zoomed-out frame reads a few blocks per column
  // instead of descending to the events at every column edge (several times
  // faster).
  void columns(const std::vector<Event>& events, const Window& w, ColumnAccum& out,
               std::vector<uint32_t>* wide = nullptr, double wide_px = 3.0,
               double split_px = 0) const;

  // Exact busy ns of the lane inside [a, b).
  int64_t busy_in(const std::vector<Event>& events, int64_t a, int64_t b) const;

  // Index of the first event whose end > t (events.size() if none).
  static size_t first_ending_after(const std::vector<Event>& events, int64_t t);

  size_t memory_bytes() const;
  int levels() const { return static_cast<int>(levels_.size()); }

 private:
  struct Ctx;
  void visit(Ctx& c, int level, size_t node) const;
  int64_t busy_rec(const std::vector<Event>& ev, int level, size_t node, int64_t a, int64_t b) const;

  // levels_[L][i] covers events [i * kLeaf << L, (i + 1) * kLeaf << L). The
  // extent is stored (not read from the events) so the walk stays in these
  // small arrays instead of missing the cache on the big event array.
  struct Node {
    int64_t start, end, busy;
    uint32_t longest;      // index of the longest event
    uint32_t longest_dur;  // its duration, saturated (ranks columns' dominant events)
  };
  static_assert(sizeof(Node) == 32);
  std::vector<std::vector<Node>> levels_;
};

// Counter samples as a step function; min and max per block for fast
// per-column ranges.
class CounterPyramid {
 public:
  static constexpr uint32_t kLeaf = 16;
  void build(const std::vector<CounterSample>& samples);
  // For each column: min and max of the values the step function takes there
  // (NaN where the counter has no value yet).
  void columns(const std::vector<CounterSample>& samples, const Window& w, std::vector<double>& lo,
               std::vector<double>& hi) const;
  double min_value() const { return min_.empty() ? 0 : min_.back()[0]; }
  double max_value() const { return max_.empty() ? 0 : max_.back()[0]; }

 private:
  void range_minmax(const std::vector<CounterSample>& s, size_t i, size_t j, double& lo,
                    double& hi) const;
  std::vector<std::vector<double>> min_, max_;
};

}  // namespace gpuscope::gui
