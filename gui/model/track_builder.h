// Turns the raw events of one row (a GPU stream, a CPU thread) into lanes of
// non-overlapping events, and derives the summaries and indexes the viewer
// needs from finished tracks.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

// Sorts `events` (start ascending, longer first, outer kinds first) and puts each
// into the first lane that is free at its start. For properly nested events
// (ops, push/pop ranges, API calls inside ops) the lane is the nesting depth;
// overlapping ones get extra lanes. Builds every lane's pyramid.
std::vector<Lane> pack_lanes(std::vector<Event> events, bool sorted = false);

// The order pack_lanes wants: start ascending, longer first, outer kinds first.
bool lane_order(const Event& a, const Event& b);
void sort_for_lanes(std::vector<Event>& events);

// Correlation ids link an API call to the GPU work it launched (per process).
struct CorrEntry {
  uint32_t pid = 0;
  uint32_t corr = 0;
  uint16_t track = 0;
  uint16_t lane = 0;
  uint32_t index = 0;
};
static_assert(sizeof(CorrEntry) == 16);

class CorrIndex {
 public:
  // Indexes every event of `kinds` in `tracks` that carries a correlation id.
  void build(const std::vector<std::shared_ptr<Track>>& tracks, bool gpu_kinds);
  // All events with this (pid, correlation); several for a CUDA graph launch.
  std::vector<EventRef> find(int64_t pid, uint32_t corr) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<const Track*> tracks_;
  std::vector<CorrEntry> entries_;  // sorted by (pid, corr)
};

// Per-name totals of the events of `kind` in `tracks`.
std::vector<NameSummary> summarize_names(const std::vector<std::shared_ptr<Track>>& tracks,
                                         EventKind kind);
// Per copy direction; `bytes[k]` is the byte total of copy kind k (read from the table).
std::vector<MemcpySummary> summarize_memcpys(const std::vector<std::shared_ptr<Track>>& tracks,
                                             const std::vector<int64_t>& bytes);

}  // namespace gpuscope::gui
