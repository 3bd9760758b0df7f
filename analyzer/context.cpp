// Builds the shared analysis context: selections, the priority breakdown (a
// sweep over cumulative interval unions) and GPU idle gap attribution.
#include "analyzer/context.h"

#include "analyzer/parallel.h"
#include "analyzer/timing.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/place_ops.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

namespace gpuscope::analyzer {
namespace {

// Indices of `events` whose start lies inside one of the merged step windows.
// Events and windows are both sorted by start: one forward walk.
template <class T, class Pred>
std::vector<uint32_t> select_in_steps(const std::vector<T>& events, const IntervalSet& steps, Pred keep) {
  std::vector<uint32_t> out;
  const auto& w = steps.items();
  size_t j = 0;
  for (uint32_t i = 0; i < events.size(); ++i) {
    int64_t t = events[i].start;
    while (j < w.size() && w[j].end <= t) ++j;
    if (j == w.size()) break;
    if (t >= w[j].start && keep(events[i])) out.push_back(i);
  }
  return out;
}

struct Wait {
  int64_t start = 0, end = 0;
  uint32_t api = kNone;
  bool allocator = false;
};

}  // namespace

uint32_t Context::user_op(uint32_t op) const {
  if (op == kNone) return op;
  while (true) {
    uint32_t parent = m.op_parent[op];
    if (parent == kNone || !m.str(m.ops[parent].name).starts_with("aten::")) return op;
    op = parent;
  }
}

int Context::step_of(int64_t t) const {
  auto it = std::upper_bound(steps.begin(), steps.end(), t, [](int64_t v, const StepWindow& s) { return v < s.start; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end ? static_cast<int>(it - steps.begin()) : -1;
}

namespace {

// Idle attribution results of a range of steps; two halves run in parallel.
struct IdleAcc {
  std::vector<Gap> gaps;
  std::array<int64_t, kIdleCauses> idle{}, count{};
  std::array<std::vector<Gap>, kIdleCauses> largest;
  int64_t launch_gap_launches = 0;
};

// torch.compile as torch 2.x records it without its own profiler running (no
// dynamo_timed ranges then): each compiled graph runs as an op named
// "Torch-Compiled Region: F/N", N counting the compilations of frame F. A name
// seen for the first time was compiled just before it ran, between the
// "TorchDynamo Cache Lookup" that missed on its thread and its start; its first
// run loads and warms up the new kernels, and the next "CompiledFunctionBackward"
// compiles the backward graph lazily. All of that is compilation time. "First"
// is over the whole recording (Model::compiled_region_first_run), not the window.
// With ops recorded in some steps only: the least pause between a cache
// lookup and a graph's first run that shows it was compiled there (cached
// code starts within microseconds; Dynamo and Inductor take 100 ms and more).
constexpr int64_t kCompilePauseNs = 5'000'000;

void add_first_runs_of_compiled_regions(const Model& m, std::vector<Interval>& out) {
  enum Kind : int8_t { kUnknown = -1, kOther, kLookup, kRegion, kBackward };
  std::vector<int8_t> kind((m.strings ? m.strings->size() : 0) + 1, kUnknown);
  auto kind_of = [&](uint32_t id) {
    if (id >= kind.size() - 1) return kOther;
    if (kind[id] == kUnknown) {
      std::string_view n = m.str(id);
      kind[id] = n == "TorchDynamo Cache Lookup"                ? kLookup
                 : n.starts_with("Torch-Compiled Region: ")    ? kRegion
                 : n == "CompiledFunctionBackward"             ? kBackward
                                                               : kOther;
    }
    return static_cast<Kind>(kind[id]);
  };
  std::unordered_map<uint32_t, int64_t> lookup_end;  // by thread: the last lookup that ended
  int64_t backward_after = -1;  // a new region's backward is still to come
  for (const auto& o : m.ops) {
    switch (kind_of(o.name)) {
      case kLookup:
        lookup_end[o.thread] = std::max(lookup_end[o.thread], o.end);
        break;
      case kRegion:
        if (auto first = m.compiled_region_first_run.find(o.name);
            first != m.compiled_region_first_run.end() && first->second == o.start) {
          auto it = lookup_end.find(o.thread);
          const int64_t from = it != lookup_end.end() && it->second <= o.start ? it->second : o.start;
          // Ops recorded in some steps only: a graph first recorded in a later
          // step may have been compiled, unseen, in one whose ops were not; its
          // first recorded run counts only when the compile is in sight (the
          // cache lookup that missed, then a compile-length pause).
          if (!m.op_steps.empty() && o.start - from < kCompilePauseNs) break;
          out.push_back({from, o.end});
          backward_after = o.end;
        }
        break;
      case kBackward:
        if (backward_after >= 0 && o.start >= backward_after) {
          out.push_back({o.start, o.end});
          backward_after = -1;
        }
        break;
      default:
        break;
    }
  }
}

constexpr size_t kKeepLargest = 8;
bool longer(const Gap& a, const Gap& b) { return a.length() > b.length(); }  // as a heap order: min-heap

void keep_largest(std::vector<Gap>& top, const Gap& g) {
  if (top.size() < kKeepLargest || g.length() > top.front().length()) {
    top.push_back(g);
    std::push_heap(top.begin(), top.end(), longer);
    if (top.size() > kKeepLargest) {
      std::pop_heap(top.begin(), top.end(), longer);
      top.pop_back();
    }
  }
}

struct IdleInputs {
  const Context& c;
  std::vector<Wait> waits;          // sorted by end
  std::vector<Wait> waits_by_start; // the same, sorted by start
  IntervalSet alloc;
  // Unseen compiles (Context::unseen_compile_ns): per analysed step, whether it
  // loaded GPU code with its ops not recorded in a torch.compile job; and when
  // those loads started, sorted.
  std::vector<uint8_t> unseen_compile_step;
  std::vector<int64_t> code_loads;

  bool unseen_compile(const Gap& g) const {
    if (g.length() < kCompilePauseNs || g.step >= unseen_compile_step.size() || !unseen_compile_step[g.step]) return false;
    auto it = std::lower_bound(code_loads.begin(), code_loads.end(), g.start);
    return it != code_loads.end() && *it < g.end;
  }

  // The cause of GPU idle time in g: what the process's CPU threads were doing.
  IdleCause cause_of(Gap& g) const {
    const int64_t len = g.length();
    if (2 * c.dataloader.covered(g.start, g.end) >= len) return IdleCause::kDataLoader;
    if (2 * c.compiling.covered(g.start, g.end) >= len || unseen_compile(g)) return IdleCause::kCompile;
    if (2 * alloc.covered(g.start, g.end) >= len) return IdleCause::kAllocator;
    // The CPU synchronized while the GPU sat idle: round trips such as one .item()
    // after another, each a tiny copy and a wait.
    auto w = std::lower_bound(waits_by_start.begin(), waits_by_start.end(), g.start,
                              [](const Wait& x, int64_t t) { return x.start < t; });
    if (w != waits_by_start.end() && w->start < g.end && len <= (w->end - w->start) + kWaitGapSlackNs) {
      g.blocker = w->api;
      return w->allocator ? IdleCause::kAllocator : IdleCause::kHostSync;
    }
    // Launch calls made during the gap (API calls are sorted by start; a gap holds few).
    const auto& apis = c.m.apis;
    auto it = std::lower_bound(apis.begin(), apis.end(), g.start, [](const ApiRec& a, int64_t t) { return a.start < t; });
    uint32_t launches = 0;
    for (; it != apis.end() && it->start < g.end; ++it) launches += it->cls == ApiClass::kLaunch;
    g.launches = launches;
    if (g.launches > 0 && (len <= static_cast<int64_t>(g.launches) * kLaunchGapPerLaunchNs || len <= kDispatchGapNs))
      return IdleCause::kLaunch;
    // Inside torch ops that go on to launch kernels, the CPU time between
    // launches is the ops' own dispatch: launch overhead, not CPU work that could
    // move to a DataLoader worker.
    if (2 * c.op_busy.covered(g.start, g.end) >= len) return g.launches > 0 ? IdleCause::kLaunch : IdleCause::kCpuCompute;
    return IdleCause::kOther;
  }

  // A blocking wait that was in progress when the GPU ran dry and returned inside
  // the gap. Without it the CPU would have run ahead for as long as it waited, so
  // it explains at most that much of the gap: min(gap, wait).
  const Wait* blocking_wait(int64_t a, int64_t b) const {
    auto it = std::lower_bound(waits.begin(), waits.end(), a - kSyncToleranceNs,
                               [](const Wait& w, int64_t t) { return w.end < t; });
    const Wait* best = nullptr;
    for (; it != waits.end() && it->end <= b; ++it)
      if (it->start < a + kSyncToleranceNs && (!best || it->end - it->start > best->end - best->start)) best = &*it;
    return best;
  }
};

void attribute_steps(const IdleInputs& in, uint32_t first, uint32_t last, IdleAcc& acc,
                     std::vector<std::array<int64_t, kIdleCauses>>& step_idle) {
  const Context& c = in.c;
  const auto& busy = c.gpu_busy.items();
  for (uint32_t si = first; si < last; ++si) {
    const StepWindow& s = c.steps[si];
    auto record = [&](const Gap& g) {
      const auto k = static_cast<size_t>(g.cause);
      acc.idle[k] += g.length();
      acc.count[k] += 1;
      step_idle[si][k] += g.length();
      keep_largest(acc.largest[k], g);
      if (g.cause == IdleCause::kLaunch)
        acc.launch_gap_launches += g.launches;
      else
        acc.gaps.push_back(g);
    };
    auto emit = [&](int64_t a, int64_t b) {
      if (b <= a) return;
      Gap g;
      g.start = a;
      g.end = b;
      g.step = si;
      g.cause = in.cause_of(g);
      if (g.cause != IdleCause::kDataLoader && g.cause != IdleCause::kCompile) {
        if (const Wait* w = in.blocking_wait(a, b)) {
          // The wait emptied the GPU's queue: until the CPU has launched the
          // next kernels after it, the whole gap is the sync's cost.
          Gap head = g;
          head.end = b;
          head.cause = w->allocator ? IdleCause::kAllocator : IdleCause::kHostSync;
          head.blocker = w->api;
          head.launches = 0;
          record(head);
          if (head.end >= b) return;
          g.start = head.end;
          g.launches = 0;
          g.cause = in.cause_of(g);
        }
      }
      record(g);
    };
    auto it = std::upper_bound(busy.begin(), busy.end(), s.start, [](int64_t t, const Interval& iv) { return t < iv.end; });
    int64_t cursor = s.start;
    for (; it != busy.end() && it->start < s.end; ++it) {
      emit(cursor, std::min(it->start, s.end));
      cursor = std::max(cursor, it->end);
    }
    emit(cursor, s.end);
  }
}

// The category interval sets of the breakdown (phase 1), consumed by the sweep.
struct CategorySets {
  IntervalSet compute, comm, memcpy, memset, runtime;
};

// Each kernel name's class, once per name.
void classify_kernels(Context& c, const Model& m) {
  const size_t nstr = m.strings ? m.strings->size() : 0;
  c.kclass.resize(nstr);
  std::vector<bool> classified(nstr, false);
  for (const auto& k : m.kernels) {
    if (k.name < nstr && !classified[k.name]) {
      c.kclass[k.name] = classify_kernel(m.str(k.name));
      classified[k.name] = true;
    }
  }
}

// Phase 1, in parallel: the caller's task (linking ops), the selections, and the
// category interval sets. Kernels, copies, API calls and ops are sorted by start.
CategorySets select_and_build_sets(Context& c, const Model& m, int64_t device, const std::function<void()>& alongside) {
  const size_t nstr = m.strings ? m.strings->size() : 0;
  CategorySets sets;
  const auto dev = static_cast<uint16_t>(std::max<int64_t>(device, 0));
  const bool has_device = device >= 0;

  std::vector<std::function<void()>> tasks = {
      [&] {
        if (alongside) alongside();
      },
      [&] {
        c.kernels = select_in_steps(m.kernels, c.step_set, [&](const KernelRec& k) { return has_device && k.device == dev; });
        c.copies = select_in_steps(m.copies, c.step_set, [&](const CopyRec& x) { return has_device && x.device == dev; });
        c.apis = select_in_steps(m.apis, c.step_set, [](const ApiRec&) { return true; });
        c.ops = select_in_steps(m.ops, c.step_set, [](const OpRec&) { return true; });
        std::unordered_map<uint32_t, size_t> slot;
        for (uint32_t i : c.kernels) {
          auto [it, fresh] = slot.emplace(m.kernels[i].stream, c.kernels_by_stream.size());
          if (fresh) c.kernels_by_stream.push_back({m.kernels[i].stream, {}});
          c.kernels_by_stream[it->second].second.push_back(i);
        }
      },
      [&] {
        if (!has_device) return;
        auto kernel_set = [&](bool communication) {
          return IntervalSet::from_sorted_fn(m.kernels.size(), [&](size_t i) {
            const KernelRec& k = m.kernels[i];
            return k.device == dev && c.kc(k.name).has(kCommunication) == communication ? Interval{k.start, k.end()} : Interval{};
          }, false);
        };
        sets.compute = kernel_set(false);
        sets.comm = kernel_set(true);
        auto copy_set = [&](bool is_memset) {
          return IntervalSet::from_sorted_fn(m.copies.size(), [&](size_t i) {
            const CopyRec& x = m.copies[i];
            const bool scalar_read = !x.memset && x.copy_kind == schema::copy_kind::DtoH && x.bytes <= kScalarReadBytes;
            return x.device == dev && x.memset == is_memset && !scalar_read ? Interval{x.start, x.end()} : Interval{};
          }, false);
        };
        sets.memcpy = copy_set(false);
        sets.memset = copy_set(true);
      },
      [&] {
        sets.runtime = IntervalSet::from_sorted_fn(
            m.apis.size(), [&](size_t i) { return Interval{m.apis[i].start, m.apis[i].end()}; }, false);
      },
      [&] {
        c.op_busy = IntervalSet::from_sorted_fn(m.ops.size(), [&](size_t i) { return Interval{m.ops[i].start, m.ops[i].end}; });
        std::vector<Interval> raw;
        for (const auto& r : m.ranges)
          if (r.source == schema::range_source::dataloader || is_dataloader_range_name(m.str(r.name)))
            raw.push_back({r.start, r.end});
        c.dataloader = IntervalSet::from(std::move(raw));
        raw = {};
        std::vector<int8_t> memo(nstr + 1, -1);
        auto compile_name = [&](uint32_t id) {
          if (id >= nstr) return false;
          if (memo[id] < 0) memo[id] = is_compile_range_name(m.str(id)) ? 1 : 0;
          return memo[id] == 1;
        };
        for (const auto& r : m.ranges)
          if (compile_name(r.name)) raw.push_back({r.start, r.end});
        for (const auto& o : m.ops)
          if (compile_name(o.name)) raw.push_back({o.start, o.end});
        add_first_runs_of_compiled_regions(m, raw);
        c.compiling = IntervalSet::from(std::move(raw));
      },
  };
  run_tasks(tasks);
  c.step_ops.assign(c.steps.size(), 0);
  for (uint32_t i : c.ops)
    if (const int step = c.step_of(m.ops[i].start); step >= 0) {
      int8_t& k = c.step_ops[static_cast<size_t>(step)];
      k = std::max<int8_t>(k, m.ops[i].ext >= store::kPlacedOpIdBase ? 1 : 2);
    }
  return sets;
}

// Phase 2: priority sweep, step by step. The covered time of the union of the
// first k categories, minus that of the first k-1, is what category k adds.
// Unions are built per step from the clipped sets, so no whole-run union of
// kernels and API calls (millions of intervals) is ever materialized. Leaves
// the sets empty.
void sweep_priorities(Context& c, CategorySets& sets) {
  const IntervalSet* order[Breakdown::kCategories - 1] = {&sets.compute, &sets.memcpy, &sets.memset, &sets.comm, &sets.runtime,
                                                          &c.dataloader, &c.op_busy};
  std::array<std::vector<int64_t>, Breakdown::kCategories - 1> cov;
  for (auto& v : cov) v.assign(c.steps.size(), 0);
  {
    std::vector<Interval> cur, add, merged;
    for (size_t i = 0; i < c.steps.size(); ++i) {
      const int64_t s0 = c.steps[i].start, s1 = c.steps[i].end;
      cur.clear();
      for (size_t k = 0; k < std::size(order); ++k) {
        add.clear();
        order[k]->append_clipped(s0, s1, add);
        merged.clear();
        std::merge(cur.begin(), cur.end(), add.begin(), add.end(), std::back_inserter(merged),
                   [](const Interval& a, const Interval& b) { return a.start < b.start; });
        cur.clear();
        int64_t total = 0;
        for (const Interval& iv : merged) {
          if (!cur.empty() && iv.start <= cur.back().end) {
            if (iv.end > cur.back().end) {
              total += iv.end - cur.back().end;
              cur.back().end = iv.end;
            }
          } else {
            cur.push_back(iv);
            total += iv.end - iv.start;
          }
        }
        cov[k][i] = total;
      }
    }
  }
  c.gpu_busy = sets.compute.unite(sets.memcpy, false).unite(sets.memset, false).unite(sets.comm, false);
  sets = {};
  c.step_breakdown.resize(c.steps.size());
  for (size_t i = 0; i < c.steps.size(); ++i) {
    Breakdown& b = c.step_breakdown[i];
    int64_t prev = 0;
    for (int k = 0; k < Breakdown::kCategories - 1; ++k) {
      b.at(k) = cov[static_cast<size_t>(k)][i] - prev;
      prev = cov[static_cast<size_t>(k)][i];
    }
    b.idle = c.steps[i].duration() - prev;
    for (int k = 0; k < Breakdown::kCategories; ++k) c.breakdown.at(k) += b.get(k);
  }
}

// Phase 3: idle attribution, the steps in two halves.
void attribute_idle(Context& c, const Model& m) {
  IdleInputs in{c, {}, {}, {}, {}, {}};
  for (const auto& s : m.syncs) {
    if (s.type == schema::sync_type::stream_wait_event) continue;  // the GPU waits, not the host
    uint32_t api = m.api_by_corr.find(s.corr);
    in.waits.push_back({s.start, s.end, api, api != kNone && api_is_allocator(m.apis[api].cls)});
  }
  for (uint32_t i = 0; i < m.apis.size(); ++i) {
    const ApiRec& a = m.apis[i];
    if (api_blocks_host(a.cls)) in.waits.push_back({a.start, a.end(), i, api_is_allocator(a.cls)});
  }
  in.alloc = IntervalSet::from_sorted_fn(m.apis.size(), [&](size_t i) {
    return api_is_allocator(m.apis[i].cls) ? Interval{m.apis[i].start, m.apis[i].end()} : Interval{};
  });
  if (m.torch_compile) {
    in.unseen_compile_step.assign(c.steps.size(), 0);
    for (uint32_t i : c.apis) {
      if (m.apis[i].cls != ApiClass::kCodeLoad) continue;
      if (const int step = c.step_of(m.apis[i].start); step >= 0 && c.step_ops[static_cast<size_t>(step)] < 2) {
        in.unseen_compile_step[static_cast<size_t>(step)] = 1;
        in.code_loads.push_back(m.apis[i].start);
      }
    }
    std::sort(in.code_loads.begin(), in.code_loads.end());
  }
  std::sort(in.waits.begin(), in.waits.end(), [](const Wait& a, const Wait& b) { return a.end < b.end; });
  in.waits_by_start = in.waits;
  std::sort(in.waits_by_start.begin(), in.waits_by_start.end(), [](const Wait& a, const Wait& b) { return a.start < b.start; });
  const auto n = static_cast<uint32_t>(c.steps.size()), half = n / 2;
  IdleAcc a, b;
  run_tasks({[&] { attribute_steps(in, 0, half, a, c.step_idle); }, [&] { attribute_steps(in, half, n, b, c.step_idle); }});
  c.gaps = std::move(a.gaps);
  c.gaps.insert(c.gaps.end(), b.gaps.begin(), b.gaps.end());
  for (size_t k = 0; k < kIdleCauses; ++k) {
    c.idle_by_cause[k] = a.idle[k] + b.idle[k];
    c.gaps_by_cause[k] = a.count[k] + b.count[k];
    auto& top = c.largest[k];
    top = std::move(a.largest[k]);
    top.insert(top.end(), b.largest[k].begin(), b.largest[k].end());
    std::stable_sort(top.begin(), top.end(), [](const Gap& x, const Gap& y) {
      return x.length() != y.length() ? x.length() > y.length() : x.start < y.start;
    });
    if (top.size() > kKeepLargest) top.resize(kKeepLargest);
  }
  c.launch_gap_launches = a.launch_gap_launches + b.launch_gap_launches;
  if (!in.code_loads.empty()) {
    std::vector<Interval> unseen;
    std::vector<uint8_t> steps_with(c.steps.size(), 0);
    for (const Gap& g : c.gaps)
      if (g.cause == IdleCause::kCompile && in.unseen_compile(g) && c.compiling.covered(g.start, g.end) < g.length()) {
        unseen.push_back({g.start, g.end});
        steps_with[g.step] = 1;
      }
    auto unseen_set = IntervalSet::from(std::move(unseen));
    c.unseen_compile_ns = unseen_set.total();
    c.unseen_compile_steps = std::count(steps_with.begin(), steps_with.end(), uint8_t{1});
    c.compiling = c.compiling.unite(unseen_set);
  }
}

}  // namespace

Context build_context(const Model& m, const StepPlan& plan, int64_t device, const std::function<void()>& alongside) {
  PhaseTimer timer;
  Context c(m, plan);
  c.device = device;
  c.steps = plan.analysed;
  std::vector<Interval> sv;
  for (const auto& s : c.steps) {
    sv.push_back({s.start, s.end});
    c.step_ns += s.duration();
  }
  c.step_set = IntervalSet::from(sv);
  c.n_steps = std::max<double>(1.0, static_cast<double>(c.steps.size()));
  classify_kernels(c, m);
  CategorySets sets = select_and_build_sets(c, m, device, alongside);
  timer.mark("  selections and sets");
  sweep_priorities(c, sets);
  timer.mark("  priority sweep");
  c.step_idle.assign(c.steps.size(), {});
  if (device < 0) return c;
  attribute_idle(c, m);
  timer.mark("  idle attribution");
  return c;
}

}  // namespace gpuscope::analyzer
