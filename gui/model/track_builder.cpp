#include "gui/model/track_builder.h"

#include <algorithm>
#include <map>

namespace gpuscope::gui {
namespace {

// At equal start and end the enclosing kind goes first: a range wraps ops, an
// op wraps its API calls.
int nesting_rank(EventKind k) {
  switch (k) {
    case EventKind::kDataLoader:
    case EventKind::kOptimizer:
    case EventKind::kRange: return 0;
    case EventKind::kOp: return 1;
    case EventKind::kApiCall: return 2;
    case EventKind::kSync:
    case EventKind::kTracerOverhead: return 3;  // inside the API call CUPTI slowed
    default: return 4;
  }
}

}  // namespace

bool lane_order(const Event& a, const Event& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return nesting_rank(a.kind) < nesting_rank(b.kind);
}

void sort_for_lanes(std::vector<Event>& events) {
  // Rows come in id order, which is almost time order: often nothing to do.
  if (!std::is_sorted(events.begin(), events.end(), lane_order))
    std::sort(events.begin(), events.end(), lane_order);
}

std::vector<Lane> pack_lanes(std::vector<Event> events, bool sorted) {
  if (!sorted) sort_for_lanes(events);
  std::vector<Lane> lanes;
  std::vector<int64_t> lane_end;
  for (const Event& e : events) {
    size_t l = 0;
    while (l < lane_end.size() && lane_end[l] > e.start) ++l;
    if (l == lane_end.size()) {
      lanes.emplace_back();
      lane_end.push_back(INT64_MIN);
    }
    lanes[l].events.push_back(e);
    lane_end[l] = e.end;
  }
  for (auto& lane : lanes) {
    lane.events.shrink_to_fit();
    lane.finish();
  }
  return lanes;
}

void CorrIndex::build(const std::vector<std::shared_ptr<Track>>& tracks, bool gpu_kinds) {
  tracks_.clear();
  entries_.clear();
  for (const auto& t : tracks) {
    const auto ti = static_cast<uint16_t>(tracks_.size());
    tracks_.push_back(t.get());
    for (size_t l = 0; l < t->lanes.size(); ++l) {
      const auto& ev = t->lanes[l].events;
      for (size_t i = 0; i < ev.size(); ++i) {
        bool want = gpu_kinds ? is_gpu_kind(ev[i].kind) : ev[i].kind == EventKind::kApiCall;
        if (!want || ev[i].extra == 0) continue;
        entries_.push_back({static_cast<uint32_t>(t->pid), ev[i].extra, ti,
                            static_cast<uint16_t>(l), static_cast<uint32_t>(i)});
      }
    }
  }
  std::sort(entries_.begin(), entries_.end(), [](const CorrEntry& a, const CorrEntry& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.corr < b.corr;
  });
  entries_.shrink_to_fit();
}

std::vector<EventRef> CorrIndex::find(int64_t pid, uint32_t corr) const {
  std::vector<EventRef> out;
  CorrEntry key{static_cast<uint32_t>(pid), corr, 0, 0, 0};
  auto less = [](const CorrEntry& a, const CorrEntry& b) {
    return a.pid != b.pid ? a.pid < b.pid : a.corr < b.corr;
  };
  auto [lo, hi] = std::equal_range(entries_.begin(), entries_.end(), key, less);
  for (auto it = lo; it != hi; ++it) out.push_back({tracks_[it->track], it->lane, it->index});
  return out;
}

std::vector<NameSummary> summarize_names(const std::vector<std::shared_ptr<Track>>& tracks,
                                         EventKind kind) {
  std::unordered_map<uint32_t, NameSummary> by_name;
  for (const auto& t : tracks) {
    for (size_t l = 0; l < t->lanes.size(); ++l) {
      const auto& ev = t->lanes[l].events;
      for (size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].kind != kind) continue;
        auto [it, fresh] = by_name.try_emplace(ev[i].name);
        NameSummary& s = it->second;
        int64_t d = ev[i].duration();
        if (fresh) {
          s.kind = kind;
          s.name = ev[i].name;
          s.min = d;
        }
        ++s.count;
        s.total = saturating_add(s.total, d);
        s.min = std::min(s.min, d);
        if (d > s.max || !s.longest.valid()) {
          s.max = std::max(s.max, d);
          s.longest = {t.get(), static_cast<uint32_t>(l), static_cast<uint32_t>(i)};
        }
      }
    }
  }
  std::vector<NameSummary> out;
  out.reserve(by_name.size());
  for (auto& [name, s] : by_name) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const NameSummary& a, const NameSummary& b) {
    return a.total != b.total ? a.total > b.total : a.name < b.name;
  });
  return out;
}

std::vector<MemcpySummary> summarize_memcpys(const std::vector<std::shared_ptr<Track>>& tracks,
                                             const std::vector<int64_t>& bytes) {
  std::map<uint8_t, MemcpySummary> by_kind;
  for (const auto& t : tracks) {
    for (size_t l = 0; l < t->lanes.size(); ++l) {
      const auto& ev = t->lanes[l].events;
      for (size_t i = 0; i < ev.size(); ++i) {
        if (ev[i].kind != EventKind::kMemcpy) continue;
        MemcpySummary& s = by_kind[ev[i].aux];
        s.copy_kind = ev[i].aux;
        ++s.count;
        int64_t d = ev[i].duration();
        s.total = saturating_add(s.total, d);
        if (d > s.max || !s.longest.valid()) {
          s.max = std::max(s.max, d);
          s.longest = {t.get(), static_cast<uint32_t>(l), static_cast<uint32_t>(i)};
        }
      }
    }
  }
  std::vector<MemcpySummary> out;
  for (auto& [k, s] : by_kind) {
    if (k < bytes.size()) s.bytes = bytes[k];
    out.push_back(s);
  }
  return out;
}

}  // namespace gpuscope::gui
