// Value types the viewer's model hands to its views: compact events packed into
// non-overlapping lanes, tracks (one timeline row each) and their groups. No Qt,
// no SQL: the loader fills them on a worker thread, then they are immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gui/model/event.h"
#include "gui/model/lod.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::gui {

// Events that never overlap, sorted by start (and therefore by end), with their
// level-of-detail pyramid.
struct Lane {
  std::vector<Event> events;
  LanePyramid lod;
  void finish() { lod.build(events); }
};

// kSteps: the steps of one process (a rank's step lane), drawn from `steps`.
enum class TrackType : uint8_t { kEvents, kCounter, kSteps };

struct StepMarker {
  int64_t pid = 0, number = 0, start = 0, end = 0;
};

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
  std::vector<StepMarker> steps;  // kSteps: sorted by start
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

// Summary table rows. `longest` points at the longest instance.
struct NameSummary {
  EventKind kind = EventKind::kKernel;
  uint32_t name = 0;
  int64_t count = 0, total = 0, min = 0, max = 0;
  EventRef longest;
};

struct MemcpySummary {
  uint8_t copy_kind = schema::copy_kind::unknown;
  int64_t count = 0, bytes = 0, total = 0, max = 0;
  EventRef longest;
};

// A time range a finding points at, and whose it is: the rank its label names
// and the process (the analysed one for a per-process rule), -1 when unknown.
struct EvidenceRange {
  int64_t start = 0, end = 0;  // ns since origin
  std::string label;
  int64_t rank = -1, pid = -1;
};

// A finding from the analyzer, as the findings panel shows it.
struct FindingItem {
  std::string id, title, severity, summary, fix;
  double saving_ns = 0;       // estimated time saved per step, as the report gives it
  double saving_fraction = 0; // of the step, 0..1
  std::vector<EvidenceRange> evidence;
  int64_t rank = -1;  // cross-rank findings: the rank they name (the straggler, the last to arrive)
};

// One rank of a distributed job as the analyzer summarized it (analyzer's
// RankSummary): what the rank groups' titles compare.
struct RankItem {
  int64_t rank = 0, pid = 0;
  std::string host;
  int64_t steps = 0;  // analysed steps
  double step_ms_median = 0, step_ms_p95 = 0;
  double own_ms_median = 0;         // median step less its wait in collectives
  double collective_ms_median = 0;  // wait in collectives, median step
  double collective_ms_per_step = 0, data_ms_per_step = 0, compute_ms_per_step = 0;
  double comm_overlap_pct = -1;  // NCCL kernel time a compute kernel overlaps, %; -1 without NCCL kernels
};

using StringTable = std::vector<std::string>;

}  // namespace gpuscope::gui
