#include "model/timeline.h"

#include <algorithm>

namespace gpuscope::gui {

void Timeline::reset(std::shared_ptr<const RecordingInfo> info) {
  *this = Timeline();
  info_ = std::move(info);
  if (!info_) return;
  t_min_ = info_->t_min;
  t_max_ = info_->t_max;
  for (const auto& g : info_->groups) add_group(g);
  sort_groups();
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
  groups_.push_back({g, {}});
}

void Timeline::sort_groups() {
  std::stable_sort(groups_.begin(), groups_.end(), [](const Group& a, const Group& b) {
    return a.group.sort_key < b.group.sort_key;
  });
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
  sort_groups();
  for (auto& g : groups_)
    std::stable_sort(g.tracks.begin(), g.tracks.end(),
                     [](const Track* a, const Track* b) { return a->sort_key < b->sort_key; });
  steps_.insert(steps_.end(), batch->steps.begin(), batch->steps.end());
  std::sort(steps_.begin(), steps_.end(),
            [](const StepMarker& a, const StepMarker& b) { return a.start < b.start; });
  if (batch->has_kernel_summary) kernels_ = batch->kernels;
  if (batch->has_op_summary) ops_ = batch->ops;
  if (batch->has_memcpy_summary) memcpys_ = batch->memcpys;
  if (batch->gpu_corr.size()) gpu_corr_.push_back(&batch->gpu_corr);
  if (batch->api_corr.size()) api_corr_.push_back(&batch->api_corr);
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
