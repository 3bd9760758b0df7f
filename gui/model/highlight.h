// A set of highlighted events (search matches, all instances of a kernel, an
// op's GPU work), kept as filtered lanes with their own pyramids so the view
// draws them over the timeline at any zoom in the same frame budget, and so
// next/previous walk them in time order.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "gui/model/timeline.h"

namespace gpuscope::gui {

class Highlight {
 public:
  struct FilteredLane {
    const Track* track = nullptr;
    uint32_t lane = 0;
    Lane events;                 // copies of the matching events, with a pyramid
    std::vector<uint32_t> orig;  // index of each in the track's lane
  };

  void clear();
  bool empty() const { return count_ == 0; }
  size_t count() const { return count_; }

  // Every event of the timeline for which `pred` holds.
  void select(const Timeline& tl, const std::function<bool(const Event&)>& pred);
  void select_refs(const std::vector<EventRef>& refs);

  const FilteredLane* find(const Track* track, uint32_t lane) const;
  const std::vector<FilteredLane>& lanes() const { return lanes_; }

  // The match after / before `from` in (start time, lane order); from an
  // invalid ref, the first match at or after / last before time `t`.
  EventRef next(const EventRef& from, int64_t t) const;
  EventRef prev(const EventRef& from, int64_t t) const;
  // 1-based position of a match, 0 when it is not one.
  size_t rank(const EventRef& ref) const;

 private:
  void index_lanes();
  std::vector<FilteredLane> lanes_;
  std::unordered_map<const void*, size_t> by_lane_;  // key: &track->lanes[lane]
  size_t count_ = 0;
};

}  // namespace gpuscope::gui
