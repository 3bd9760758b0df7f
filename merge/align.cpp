#include "merge/align.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::merge {
namespace {

namespace rec = store::rec;

int64_t median(std::vector<int64_t>& v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const int64_t hi = v[mid];
  if (v.size() % 2 == 1) return hi;
  const int64_t lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lo + (hi - lo) / 2;
}

// The step an event began in: the last step of its pid that started at or before it.
int64_t step_of(const std::vector<std::pair<int64_t, int64_t>>* steps, int64_t start) {
  auto it = std::upper_bound(steps->begin(), steps->end(), std::pair<int64_t, int64_t>{start, INT64_MAX});
  return it == steps->begin() ? -1 : std::prev(it)->second;
}

std::optional<Alignment> align_on(const FileCollectives::Ends& ref, const FileCollectives::Ends& other) {
  std::vector<int64_t> d;
  size_t matched = 0;
  for (const auto& [key, ref_ends] : ref) {
    auto it = other.find(key);
    if (it == other.end()) continue;
    ++matched;
    for (int64_t a : ref_ends)
      for (int64_t b : it->second) d.push_back(a - b);
  }
  if (d.empty()) return std::nullopt;
  Alignment al;
  al.collectives = matched;
  al.pairs = d.size();
  std::vector<int64_t> sorted = d;
  al.offset_ns = median(sorted);
  std::vector<int64_t> dev;
  dev.reserve(d.size());
  for (int64_t x : d) dev.push_back(std::llabs(x - al.offset_ns));
  al.max_deviation_ns = *std::max_element(dev.begin(), dev.end());
  al.residual_ns = median(dev);
  return al;
}

// NCCL kernels, each placed at its launch on the CPU (the API call of its
// correlation): the GPU may run a step's last collective while the CPU is in
// the next step already, further on some ranks than on others.
void read_nccl_kernels(store::Reader& reader,
                       const std::unordered_map<int64_t, std::pair<Source, std::string>>& names,
                       std::vector<CollectiveEvent>& events) {
  if (names.empty()) return;
  const size_t first = events.size();
  std::unordered_map<int64_t, std::unordered_map<int64_t, size_t>> by_correlation;  // pid -> correlation -> event
  using K = rec::Kernel;
  store::Cursor<K> kernels(reader.db(), {K::kPid, K::kNameId, K::kStart, K::kEnd, K::kCorrelation});
  while (kernels.next()) {
    const K& k = kernels.row();
    auto it = names.find(k.name_id_or_zero());
    if (it == names.end()) continue;
    const int64_t pid = k.pid_or_zero();
    if (!k.null(K::kCorrelation) && k.correlation != 0) by_correlation[pid][k.correlation] = events.size();
    events.push_back({pid, it->second.first, "kernel:" + it->second.second, k.start_or_zero(),
                      k.end_or_zero()});
  }
  if (events.size() == first || by_correlation.empty()) return;
  using A = rec::ApiCall;
  store::Cursor<A> calls(reader.db(), {A::kPid, A::kCorrelation, A::kStart}, "WHERE correlation != 0");
  while (calls.next()) {
    const A& a = calls.row();
    auto p = by_correlation.find(a.pid_or_zero());
    if (p == by_correlation.end()) continue;
    auto c = p->second.find(a.correlation);  // not NULL: the WHERE
    if (c != p->second.end()) events[c->second].start = a.start_or_zero();
  }
}

// The closed ops (R = rec::Op) or ranges (rec::Range) of a collective's name.
template <class R>
void read_cpu_collectives(store::Reader& reader,
                          const std::unordered_map<int64_t, std::pair<Source, std::string>>& names, const char* prefix,
                          std::vector<CollectiveEvent>& events) {
  if (names.empty()) return;
  store::Cursor<R> st(reader.db(), {R::kPid, R::kNameId, R::kStart, R::kEnd}, "WHERE \"end\" IS NOT NULL");
  while (st.next()) {
    const R& row = st.row();
    auto it = names.find(row.name_id_or_zero());
    if (it == names.end()) continue;
    events.push_back({row.pid_or_zero(), it->second.first, prefix + it->second.second,
                      row.start_or_zero(), row.end});
  }
}

}  // namespace

const char* source_name(Source s) {
  switch (s) {
    case Source::kNcclKernel: return "NCCL kernel ends";
    case Source::kWork: return "ProcessGroup work ends";
    case Source::kC10dOp: return "c10d op ends";
  }
  return "?";
}

std::optional<Source> kernel_source(std::string_view n) {
  if (n.starts_with("ncclDevKernel") || n.starts_with("ncclKernel")) return Source::kNcclKernel;
  return std::nullopt;
}

std::optional<Source> cpu_source(std::string_view n) {
  for (std::string_view backend : {"gloo:", "nccl:", "mpi:", "ucc:"})
    if (n.starts_with(backend)) return Source::kWork;
  if (n.starts_with("c10d::")) return Source::kC10dOp;
  return std::nullopt;
}

FileCollectives key_collectives(std::vector<CollectiveEvent> events,
                                const std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>& steps) {
  std::stable_sort(events.begin(), events.end(), [](const CollectiveEvent& a, const CollectiveEvent& b) {
    return std::tie(a.pid, a.start) < std::tie(b.pid, b.start);
  });
  FileCollectives out;
  out.events = events.size();
  // Occurrences so far per (pid, source, name), in all and within the current step.
  std::map<std::tuple<int64_t, Source, std::string>, int64_t> total;
  std::map<std::tuple<int64_t, Source, std::string, int64_t>, int64_t> in_step;
  for (const CollectiveEvent& e : events) {
    const size_t src = static_cast<size_t>(e.source);
    const int64_t nth = total[{e.pid, e.source, e.name}]++;
    out.by_order[src][{-1, e.name, nth}].push_back(e.end);
    // A process without steps is matched by order only.
    auto s = steps.find(e.pid);
    if (s == steps.end() || s->second.empty()) continue;
    const int64_t step = step_of(&s->second, e.start);
    const int64_t nth_in_step = in_step[{e.pid, e.source, e.name, step}]++;
    out.by_step[src][{step, e.name, nth_in_step}].push_back(e.end);
  }
  return out;
}

FileCollectives read_collectives(store::Reader& reader) {
  // Names by id, classified once.
  std::unordered_map<int64_t, std::pair<Source, std::string>> kernel_names, cpu_names;
  {
    store::Cursor<rec::String> st(reader.db(), {rec::String::kId, rec::String::kValue});
    while (st.next()) {
      const std::string_view v = st->value;
      if (auto k = kernel_source(v)) kernel_names.emplace(st->id, std::make_pair(*k, std::string(v)));
      if (auto c = cpu_source(v)) cpu_names.emplace(st->id, std::make_pair(*c, std::string(v)));
    }
  }
  std::vector<CollectiveEvent> events;
  // An op and a record_function range of one name are kept apart: a torch
  // version may record both for one collective.
  read_cpu_collectives<rec::Op>(reader, cpu_names, "op:", events);
  read_cpu_collectives<rec::Range>(reader, cpu_names, "range:", events);
  read_nccl_kernels(reader, kernel_names, events);

  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> steps;
  using S = rec::Step;
  store::Cursor<S> st(reader.db(), {S::kPid, S::kStart, S::kNumber}, "ORDER BY pid, start");
  while (st.next())
    steps[st->pid_or_zero()].emplace_back(st->start_or_zero(),
                                                            st->number_or_zero());
  return key_collectives(std::move(events), steps);
}

std::optional<Alignment> align(const FileCollectives& reference, const FileCollectives& other) {
  for (bool by_step : {true, false}) {
    for (size_t s = 0; s < kSources; ++s) {
      const auto& ref = by_step ? reference.by_step[s] : reference.by_order[s];
      const auto& oth = by_step ? other.by_step[s] : other.by_order[s];
      if (auto al = align_on(ref, oth)) {
        al->source = static_cast<Source>(s);
        al->by_step = by_step;
        return al;
      }
    }
  }
  return std::nullopt;
}

}  // namespace gpuscope::merge
