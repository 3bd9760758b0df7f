// Everything the viewer has loaded from one recording, merged from the loader's
// batches, with the queries views need: groups and their tracks in display
// order, the time extent, launch <-> GPU work links, hit tests. Owned and used
// on the GUI thread; the data it points to is immutable.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "model/recording_loader.h"
#include "model/timeline_data.h"

namespace gpuscope::gui {

class Timeline {
 public:
  void reset(std::shared_ptr<const RecordingInfo> info);
  void add(std::shared_ptr<const LoadBatch> batch);

  const RecordingInfo* info() const { return info_.get(); }
  std::shared_ptr<const StringTable> strings() const {
    return info_ ? info_->strings : nullptr;
  }
  std::string_view name(uint32_t id) const;

  // Groups in display order (GPUs, then processes), each with its tracks.
  struct Group {
    TrackGroup group;
    std::vector<const Track*> tracks;
  };
  const std::vector<Group>& groups() const { return groups_; }
  const std::vector<StepMarker>& steps() const { return steps_; }

  // Extent of the loaded events (falls back to the process table's).
  int64_t t_min() const { return t_min_; }
  int64_t t_max() const { return t_max_; }
  int64_t event_count() const { return event_count_; }

  const std::vector<NameSummary>& kernel_summary() const { return kernels_; }
  const std::vector<NameSummary>& op_summary() const { return ops_; }
  const std::vector<MemcpySummary>& memcpy_summary() const { return memcpys_; }

  // GPU work (kernels, copies, sets) that an API call launched.
  std::vector<EventRef> gpu_work(const EventRef& api) const;
  // The API call that launched a GPU event, if recorded.
  EventRef launch_of(const EventRef& gpu) const;
  // GPU work launched from inside an op (by API calls on its thread during it).
  std::vector<EventRef> gpu_work_of_op(const EventRef& op) const;
  // The event of `lane` of `track` at time t, or the nearest within `slop` ns.
  static EventRef hit(const Track* track, uint32_t lane, int64_t t, int64_t slop);

 private:
  void add_group(const TrackGroup& g);
  void sort_groups();

  std::shared_ptr<const RecordingInfo> info_;
  std::vector<std::shared_ptr<const LoadBatch>> batches_;
  std::vector<Group> groups_;
  std::vector<StepMarker> steps_;
  std::vector<NameSummary> kernels_, ops_;
  std::vector<MemcpySummary> memcpys_;
  std::vector<const CorrIndex*> gpu_corr_, api_corr_;
  int64_t t_min_ = 0, t_max_ = 0, event_count_ = 0;
  bool have_extent_ = false;
};

}  // namespace gpuscope::gui
