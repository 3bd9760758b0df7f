#include "gui/model/highlight.h"

#include <algorithm>
#include <map>

namespace gpuscope::gui {

void Highlight::clear() {
  lanes_.clear();
  by_lane_.clear();
  count_ = 0;
}

void Highlight::index_lanes() {
  by_lane_.clear();
  count_ = 0;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    auto& fl = lanes_[i];
    fl.events.finish();
    by_lane_[&fl.track->lanes[fl.lane]] = i;
    count_ += fl.orig.size();
  }
}

void Highlight::select(const Timeline& tl, const std::function<bool(const Event&)>& pred) {
  clear();
  for (const auto& g : tl.groups()) {
    for (const Track* t : g.tracks) {
      for (uint32_t l = 0; l < t->lanes.size(); ++l) {
        const auto& ev = t->lanes[l].events;
        FilteredLane fl;
        for (size_t i = 0; i < ev.size(); ++i) {
          if (!pred(ev[i])) continue;
          fl.events.events.push_back(ev[i]);
          fl.orig.push_back(static_cast<uint32_t>(i));
        }
        if (fl.orig.empty()) continue;
        fl.track = t;
        fl.lane = l;
        lanes_.push_back(std::move(fl));
      }
    }
  }
  index_lanes();
}

void Highlight::select_refs(const std::vector<EventRef>& refs) {
  clear();
  std::map<std::pair<const Track*, uint32_t>, std::vector<uint32_t>> grouped;
  for (const auto& r : refs)
    if (r.valid()) grouped[{r.track, r.lane}].push_back(r.index);
  // Keep display order: groups and tracks as the refs' tracks are ordered.
  for (auto& [key, idx] : grouped) {
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    FilteredLane fl;
    fl.track = key.first;
    fl.lane = key.second;
    for (uint32_t i : idx) fl.events.events.push_back(key.first->lanes[key.second].events[i]);
    fl.orig = std::move(idx);
    lanes_.push_back(std::move(fl));
  }
  index_lanes();
}

const Highlight::FilteredLane* Highlight::find(const Track* track, uint32_t lane) const {
  if (lanes_.empty() || lane >= track->lanes.size()) return nullptr;
  auto it = by_lane_.find(&track->lanes[lane]);
  return it == by_lane_.end() ? nullptr : &lanes_[it->second];
}

namespace {

// Position of a match in the filtered lane (its index among the matches).
size_t position(const Highlight::FilteredLane& fl, uint32_t orig_index) {
  auto it = std::lower_bound(fl.orig.begin(), fl.orig.end(), orig_index);
  return static_cast<size_t>(it - fl.orig.begin());
}

size_t first_start_at_or_after(const std::vector<Event>& ev, int64_t t, bool strictly) {
  auto it = std::partition_point(ev.begin(), ev.end(), [&](const Event& e) {
    return strictly ? e.start <= t : e.start < t;
  });
  return static_cast<size_t>(it - ev.begin());
}

}  // namespace

EventRef Highlight::next(const EventRef& from, int64_t t) const {
  // Order: by start time, then by lane order in lanes_, then by index.
  size_t from_lane = SIZE_MAX;
  if (from.valid()) {
    t = from.event().start;
    if (const FilteredLane* fl = find(from.track, from.lane)) from_lane = static_cast<size_t>(fl - lanes_.data());
  }
  EventRef best;
  int64_t best_t = INT64_MAX;
  for (size_t li = 0; li < lanes_.size(); ++li) {
    const auto& fl = lanes_[li];
    const auto& ev = fl.events.events;
    size_t k;
    if (!from.valid())
      k = first_start_at_or_after(ev, t, false);
    else if (li == from_lane)
      k = position(fl, from.index) + (std::binary_search(fl.orig.begin(), fl.orig.end(), from.index) ? 1 : 0);
    else
      k = first_start_at_or_after(ev, t, li < from_lane);
    if (k < ev.size() && ev[k].start < best_t) {
      best_t = ev[k].start;
      best = {fl.track, fl.lane, fl.orig[k]};
    }
  }
  return best;
}

EventRef Highlight::prev(const EventRef& from, int64_t t) const {
  size_t from_lane = SIZE_MAX;
  if (from.valid()) {
    t = from.event().start;
    if (const FilteredLane* fl = find(from.track, from.lane)) from_lane = static_cast<size_t>(fl - lanes_.data());
  }
  EventRef best;
  int64_t best_t = INT64_MIN;
  for (size_t li = lanes_.size(); li-- > 0;) {
    const auto& fl = lanes_[li];
    const auto& ev = fl.events.events;
    size_t k;  // one past the candidate
    if (!from.valid())
      k = first_start_at_or_after(ev, t, false);
    else if (li == from_lane)
      k = position(fl, from.index);
    else
      k = first_start_at_or_after(ev, t, li < from_lane);
    if (k > 0 && ev[k - 1].start > best_t) {
      best_t = ev[k - 1].start;
      best = {fl.track, fl.lane, fl.orig[k - 1]};
    }
  }
  return best;
}

size_t Highlight::rank(const EventRef& ref) const {
  const FilteredLane* self = ref.valid() ? find(ref.track, ref.lane) : nullptr;
  if (!self || !std::binary_search(self->orig.begin(), self->orig.end(), ref.index)) return 0;
  const size_t self_li = static_cast<size_t>(self - lanes_.data());
  const int64_t t = ref.event().start;
  size_t before = 0;
  for (size_t li = 0; li < lanes_.size(); ++li) {
    const auto& ev = lanes_[li].events.events;
    if (li == self_li)
      before += position(*self, ref.index);
    else
      before += first_start_at_or_after(ev, t, li < self_li);
  }
  return before + 1;
}

}  // namespace gpuscope::gui
