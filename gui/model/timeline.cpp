#include "gui/model/timeline.h"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace gpuscope::gui {

void Timeline::reset(std::shared_ptr<const RecordingInfo> info) {
  *this = Timeline();
  info_ = std::move(info);
  if (!info_) return;
  t_min_ = info_->t_min;
  t_max_ = info_->t_max;
  multi_rank_ = is_multi_rank(info_->processes);
  for (const auto& g : info_->groups) add_group(g);
  update_ranks();
}

std::string_view Timeline::name(uint32_t id) const {
  if (!info_ || id >= info_->strings->size()) return {};
  return (*info_->strings)[id];
}

void Timeline::add_group(const TrackGroup& g) {
  for (auto& existing : groups_) {
    if (existing.group.key == g.key) {
      // Several parts name the same group; keep the most descriptive title.
      if (g.title.size() > existing.group.title.size()) existing.group.title = g.title;
      return;
    }
  }
  Group added;
  added.group = g;
  groups_.push_back(std::move(added));
}

namespace {

int64_t pid_of_key(const std::string& key) {
  if (!key.starts_with("proc:")) return -1;
  int64_t pid = -1;
  const char* end = key.data() + key.size();
  auto [p, ec] = std::from_chars(key.data() + 5, end, pid);
  return ec == std::errc() && p == end ? pid : -1;
}

// The one process whose rows a group holds, -1 when none or several.
int64_t only_pid(const Timeline::Group& g) {
  if (g.pid >= 0) return g.pid;
  int64_t pid = -1;
  for (const Track* t : g.tracks) {
    if (t->pid < 0 || t->pid == pid) continue;
    if (pid >= 0) return -1;
    pid = t->pid;
  }
  return pid;
}

}  // namespace

void Timeline::sort_groups() {
  // In a distributed job a GPU only one rank used follows that rank's group.
  std::unordered_map<int64_t, int64_t> rank_key;  // pid -> its group's sort key
  if (multi_rank_)
    for (const auto& g : groups_)
      if (g.rank >= 0) rank_key[g.pid] = g.group.sort_key;
  auto order = [&](const Group& g) {
    if (g.pid < 0 && !rank_key.empty()) {
      auto it = rank_key.find(only_pid(g));
      if (it != rank_key.end()) return std::tuple(it->second, 1, g.group.sort_key);
    }
    return std::tuple(g.group.sort_key, 0, int64_t{0});
  };
  std::stable_sort(groups_.begin(), groups_.end(), [&](const Group& a, const Group& b) { return order(a) < order(b); });
}

void Timeline::update_ranks() {
  if (!info_) return;
  for (auto& g : groups_) {
    g.pid = pid_of_key(g.group.key);
    g.rank = -1;
    for (const auto& p : info_->processes)
      if (p.pid == g.pid && g.pid >= 0) g.rank = p.rank;
  }
  sort_groups();
  alignment_ = multi_rank_ ? align_steps(info_->processes, steps_) : StepAlignment{};
  shifts_.clear();
  min_shift_ = max_shift_ = 0;
  for (const auto& g : groups_) {
    const int64_t group_pid = only_pid(g);
    for (const Track* t : g.tracks) {
      const int64_t shift = alignment_.offset(t->pid >= 0 ? t->pid : group_pid);
      if (shift == 0) continue;
      shifts_[t] = shift;
      min_shift_ = std::min(min_shift_, shift);
      max_shift_ = std::max(max_shift_, shift);
    }
  }
  for (auto& g : groups_) {
    g.comparison.clear();
    g.flagged = false;
    if (g.rank < 0) continue;
    for (const auto& r : ranks_)
      if (r.pid == g.pid) {
        g.comparison = rank_comparison(r);
        g.flagged = r.rank == flagged_rank_;
        if (g.flagged) g.comparison += " · straggler";
      }
  }
}

int64_t Timeline::step_shift(const Track* track) const {
  auto it = shifts_.find(track);
  return it == shifts_.end() ? 0 : it->second;
}

void Timeline::set_ranks(const std::vector<RankItem>& ranks, int64_t flagged_rank) {
  ranks_ = ranks;
  flagged_rank_ = flagged_rank;
  update_ranks();
}

int64_t Timeline::pid_of_rank(int64_t rank) const {
  if (!info_ || rank < 0) return -1;
  for (const ProcessInfo* p : ranked_processes(info_->processes))
    if (p->rank == rank) return p->pid;
  return -1;
}

void Timeline::add(std::shared_ptr<const LoadBatch> batch) {
  if (!batch) return;
  for (const auto& g : batch->groups) add_group(g);
  for (const auto& t : batch->tracks) {
    bool placed = false;
    for (auto& g : groups_) {
      if (g.group.key == t->group_key) {
        g.tracks.push_back(t.get());
        placed = true;
      }
    }
    if (!placed) {
      add_group({t->group_key, t->group_key, INT64_MAX});
      groups_.back().tracks.push_back(t.get());
    }
    // Extent: a lane's last event ends last (lanes never overlap).
    for (const auto& lane : t->lanes) {
      if (lane.events.empty()) continue;
      int64_t lo = lane.events.front().start, hi = lane.events.back().end;
      if (!have_extent_) {
        t_min_ = lo;
        t_max_ = hi;
        have_extent_ = true;
      }
      t_min_ = std::min(t_min_, lo);
      t_max_ = std::max(t_max_, hi);
      event_count_ += static_cast<int64_t>(lane.events.size());
    }
  }
  for (auto& g : groups_)
    std::stable_sort(g.tracks.begin(), g.tracks.end(), [](const Track* a, const Track* b) {
      // A step lane tops its group, even over a sampled recording's traced row.
      return a->sort_key != b->sort_key ? a->sort_key < b->sort_key
                                        : (a->type == TrackType::kSteps) > (b->type == TrackType::kSteps);
    });
  steps_.insert(steps_.end(), batch->steps.begin(), batch->steps.end());
  std::sort(steps_.begin(), steps_.end(),
            [](const StepMarker& a, const StepMarker& b) { return a.start < b.start; });
  if (batch->has_kernel_summary) kernels_ = batch->kernels;
  if (batch->has_op_summary) ops_ = batch->ops;
  if (batch->has_memcpy_summary) memcpys_ = batch->memcpys;
  if (batch->gpu_corr.size()) gpu_corr_.push_back(&batch->gpu_corr);
  if (batch->api_corr.size()) api_corr_.push_back(&batch->api_corr);
  update_ranks();
  batches_.push_back(std::move(batch));
}

std::vector<EventRef> Timeline::gpu_work(const EventRef& api) const {
  std::vector<EventRef> out;
  if (!api.valid() || api.event().kind != EventKind::kApiCall || api.event().extra == 0) return out;
  for (const CorrIndex* idx : gpu_corr_) {
    auto found = idx->find(api.track->pid, api.event().extra);
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

EventRef Timeline::launch_of(const EventRef& gpu) const {
  if (!gpu.valid() || !is_gpu_kind(gpu.event().kind) || gpu.event().extra == 0) return {};
  for (const CorrIndex* idx : api_corr_) {
    auto found = idx->find(gpu.track->pid, gpu.event().extra);
    if (!found.empty()) return found.front();
  }
  return {};
}

std::vector<EventRef> Timeline::gpu_work_of_op(const EventRef& op) const {
  std::vector<EventRef> out;
  if (!op.valid()) return out;
  const Event& o = op.event();
  for (uint32_t l = 0; l < op.track->lanes.size(); ++l) {
    const auto& ev = op.track->lanes[l].events;
    for (size_t i = LanePyramid::first_ending_after(ev, o.start); i < ev.size() && ev[i].start < o.end;
         ++i) {
      if (ev[i].kind != EventKind::kApiCall || ev[i].start < o.start || ev[i].end > o.end) continue;
      auto work = gpu_work({op.track, l, static_cast<uint32_t>(i)});
      out.insert(out.end(), work.begin(), work.end());
    }
  }
  return out;
}

EventRef Timeline::hit(const Track* track, uint32_t lane, int64_t t, int64_t slop) {
  if (!track || lane >= track->lanes.size()) return {};
  const auto& ev = track->lanes[lane].events;
  size_t i = LanePyramid::first_ending_after(ev, t - slop);
  EventRef best;
  int64_t best_dist = INT64_MAX;
  for (; i < ev.size() && ev[i].start <= t + slop; ++i) {
    int64_t dist = t < ev[i].start ? ev[i].start - t : (t > ev[i].end ? t - ev[i].end : 0);
    if (dist < best_dist) {
      best_dist = dist;
      best = {track, lane, static_cast<uint32_t>(i)};
    }
    if (dist == 0) break;
  }
  return best;
}

}  // namespace gpuscope::gui
