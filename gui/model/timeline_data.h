// Value types the viewer's model hands to its views: compact events packed into
// non-overlapping lanes, tracks (one timeline row each) and their groups. No Qt,
// no SQL: the loader fills them on a worker thread, then they are immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/event.h"
#include "model/lod.h"

namespace gpuscope::gui {

// Events that never overlap, sorted by start (and therefore by end), with their
// level-of-detail pyramid.
struct Lane {
  std::vector<Event> events;
  LanePyramid lod;
  void finish() { lod.build(events); }
};

enum class TrackType : uint8_t { kEvents, kCounter };

struct Track {
  std::string title;
  std::string group_key;  // "gpu:0", "proc:1234"
  int64_t sort_key = 0;   // order within the group
  TrackType type = TrackType::kEvents;
  int64_t pid = -1, tid = -1, device = -1, stream = -1;
  std::vector<Lane> lanes;  // kEvents: lane 0 on top, nested events below
  // kCounter: samples sorted by ts, drawn as a step function.
  std::vector<CounterSample> samples;
  CounterPyramid counter_lod;
  std::string unit;
};

struct TrackGroup {
  std::string key;
  std::string title;
  int64_t sort_key = 0;  // GPUs first, then processes by pid
};

// Where one event lives.
struct EventRef {
  const Track* track = nullptr;
  uint32_t lane = 0;
  uint32_t index = 0;
  bool valid() const { return track != nullptr; }
  const Event& event() const { return track->lanes[lane].events[index]; }
  bool operator==(const EventRef& o) const {
    return track == o.track && lane == o.lane && index == o.index;
  }
};

struct StepMarker {
  int64_t pid = 0, number = 0, start = 0, end = 0;
};

// Summary table rows. `longest` points at the longest instance.
struct NameSummary {
  EventKind kind = EventKind::kKernel;
  uint32_t name = 0;
  int64_t count = 0, total = 0, min = 0, max = 0;
  EventRef longest;
};

struct MemcpySummary {
  uint8_t copy_kind = 0;
  int64_t count = 0, bytes = 0, total = 0, max = 0;
  EventRef longest;
};

// A finding from the analyzer, as the findings panel shows it.
struct FindingItem {
  std::string id, title, severity, summary, fix;
  double saving_ns = 0;       // estimated time saved
  double saving_fraction = 0; // of the run's wall time, 0..1
  std::vector<std::pair<int64_t, int64_t>> evidence;  // time ranges, ns since origin
};

using StringTable = std::vector<std::string>;

}  // namespace gpuscope::gui
