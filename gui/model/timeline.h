// Everything the viewer has loaded from one recording, merged from the loader's
// batches, with the queries views need: groups and their tracks in display
// order, the time extent, launch <-> GPU work links, hit tests. Owned and used
// on the GUI thread; the data it points to is immutable.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gui/model/ranks.h"
#include "gui/model/recording_loader.h"
#include "gui/model/timeline_data.h"

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

  // Groups in display order, each with its tracks: GPUs, then processes; in a
  // distributed job the ranks first, by rank, each followed by the GPUs only it used.
  struct Group {
    TrackGroup group;
    std::vector<const Track*> tracks;
    int64_t pid = -1;          // process groups
    int64_t rank = -1;         // ranked process groups
    std::string comparison;    // rank groups: the analyzer's numbers (rank_comparison)
    bool flagged = false;      // the rank a straggler finding names
    std::string title() const { return comparison.empty() ? group.title : group.title + " · " + comparison; }
  };
  const std::vector<Group>& groups() const { return groups_; }
  const std::vector<StepMarker>& steps() const { return steps_; }  // every process's, by start

  // Distributed jobs (model/ranks.h): at least two ranked processes, the
  // per-rank shifts that align their steps, and each track's shift (its
  // process's, or for a row without a process its group's only process's).
  bool multi_rank() const { return multi_rank_; }
  const StepAlignment& alignment() const { return alignment_; }
  int64_t step_shift(const Track* track) const;
  int64_t min_shift() const { return min_shift_; }
  int64_t max_shift() const { return max_shift_; }
  // The analyzer's rank summaries, into the rank groups' titles; `flagged_rank`
  // (the straggler, -1 none) is marked.
  void set_ranks(const std::vector<RankItem>& ranks, int64_t flagged_rank);
  const std::vector<RankItem>& ranks() const { return ranks_; }
  int64_t pid_of_rank(int64_t rank) const;  // -1 when no process has it

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
  void update_ranks();  // group pids and order, alignment, shifts, titles

  std::shared_ptr<const RecordingInfo> info_;
  std::vector<std::shared_ptr<const LoadBatch>> batches_;
  std::vector<Group> groups_;
  std::vector<StepMarker> steps_;
  std::vector<NameSummary> kernels_, ops_;
  std::vector<MemcpySummary> memcpys_;
  std::vector<const CorrIndex*> gpu_corr_, api_corr_;
  int64_t t_min_ = 0, t_max_ = 0, event_count_ = 0;
  bool have_extent_ = false;
  bool multi_rank_ = false;
  StepAlignment alignment_;
  std::unordered_map<const Track*, int64_t> shifts_;
  int64_t min_shift_ = 0, max_shift_ = 0;
  std::vector<RankItem> ranks_;
  int64_t flagged_rank_ = -1;
};

}  // namespace gpuscope::gui
