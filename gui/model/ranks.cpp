#include "gui/model/ranks.h"

#include <algorithm>
#include <map>

#include "gui/model/format.h"

namespace gpuscope::gui {

int64_t StepAlignment::offset(int64_t pid) const {
  const RankShift* s = find(pid);
  return s ? s->offset : 0;
}

const RankShift* StepAlignment::find(int64_t pid) const {
  for (const auto& s : shifts)
    if (s.pid == pid) return &s;
  return nullptr;
}

std::vector<const ProcessInfo*> ranked_processes(const std::vector<ProcessInfo>& processes) {
  std::vector<const ProcessInfo*> out;
  for (const auto& p : processes)
    if (p.rank >= 0) out.push_back(&p);
  std::stable_sort(out.begin(), out.end(), [](const ProcessInfo* a, const ProcessInfo* b) {
    return a->rank != b->rank ? a->rank < b->rank : a->pid < b->pid;
  });
  return out;
}

bool is_multi_rank(const std::vector<ProcessInfo>& processes) { return ranked_processes(processes).size() >= 2; }

StepAlignment align_steps(const std::vector<ProcessInfo>& processes, const std::vector<StepMarker>& steps) {
  StepAlignment out;
  const auto ranked = ranked_processes(processes);
  if (ranked.size() < 2) return out;
  // Step starts by process and number (a number recorded twice: its first start).
  std::map<int64_t, std::map<int64_t, int64_t>> starts;
  for (const auto& s : steps) starts[s.pid].try_emplace(s.number, s.start);
  const std::map<int64_t, int64_t>* ref = nullptr;
  for (const ProcessInfo* p : ranked) {
    auto it = starts.find(p->pid);
    if (it == starts.end() || it->second.empty()) continue;
    if (!ref) {
      ref = &it->second;
      out.reference_rank = p->rank;
      out.reference_pid = p->pid;
    }
    RankShift shift{p->rank, p->pid, 0, 0, 0};
    std::vector<int64_t> deltas;
    for (const auto& [number, start] : it->second) {
      auto r = ref->find(number);
      if (r != ref->end()) deltas.push_back(saturating_sub(r->second, start));
    }
    if (!deltas.empty()) {
      std::vector<int64_t> sorted = deltas;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
      shift.offset = sorted[sorted.size() / 2];
      shift.shared_steps = static_cast<int64_t>(deltas.size());
      for (int64_t d : deltas) {
        const int64_t residual = saturating_sub(d, shift.offset);
        shift.max_residual = std::max(shift.max_residual, residual == INT64_MIN ? INT64_MAX : std::abs(residual));
      }
    }
    out.shifts.push_back(shift);
  }
  if (out.shifts.size() < 2) return {};  // nothing to align against
  return out;
}

std::string rank_comparison(const RankItem& r) {
  if (r.steps <= 0) return "no steps analysed";
  auto ms = [](double v) { return format_duration(v * 1e6); };
  std::string s = "step " + ms(r.step_ms_median) + " median, " + ms(r.step_ms_p95) + " p95 · waits " +
                  ms(r.collective_ms_per_step) + "/step in collectives";
  if (r.data_ms_per_step > 0) s += " · data " + ms(r.data_ms_per_step) + "/step";
  s += " · compute " + ms(r.compute_ms_per_step) + "/step";
  if (r.comm_overlap_pct >= 0) s += " · NCCL " + std::to_string(static_cast<int>(r.comm_overlap_pct + 0.5)) + " % overlapped";
  return s;
}

}  // namespace gpuscope::gui
