#include "analyzer/steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>
#include <tuple>

#include "trace_formats/common/error.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::analyzer {
namespace {

// Range sources that can mark steps: NVTX, record_function, ProfilerStep#N.
bool step_range_source(uint8_t s) {
  namespace range_source = schema::range_source;
  return s == range_source::nvtx || s == range_source::torch_user || s == range_source::profiler_step;
}

bool from_step_table(const Model& m, StepPlan& plan) {
  if (m.step_rows.empty()) return false;
  // Several sources may coexist (ProfilerStep and optimizer steps): take the
  // best one, the lowest code (profiler_step, optimizer_step, nvtx).
  int64_t best = INT64_MAX;
  for (const auto& r : m.step_rows) best = std::min(best, r.source);
  int64_t last_end = INT64_MIN;
  for (const auto& r : m.step_rows)
    if (r.source == best) {
      plan.all.push_back({r.number, r.start, r.end});
      last_end = std::max(last_end, r.end);
    }
  // The collector's graph-replay steps go on where the plugin's stopped: a
  // loop whose whole step became one CUDA graph replay after its warm-up.
  bool graph_steps = best == schema::step_source::graph_launch;
  if (!graph_steps)
    for (const auto& r : m.step_rows)
      if (r.source == schema::step_source::graph_launch && r.start >= last_end) {
        plan.all.push_back({r.number, r.start, r.end});
        graph_steps = true;
      }
  if (graph_steps) {
    plan.source = StepSource::kGraphLaunch;
    plan.detail = best == schema::step_source::graph_launch
                      ? "step table (one CUDA graph replay per step)"
                      : "step table (optimizer steps, then one CUDA graph replay per step)";
    return true;
  }
  switch (best) {
    case schema::step_source::profiler_step:
      plan.source = StepSource::kProfilerStep;
      plan.detail = "step table (ProfilerStep#N)";
      break;
    case schema::step_source::optimizer_step:
      plan.source = StepSource::kOptimizerStep;
      plan.detail = "step table (optimizer steps)";
      break;
    default: plan.source = StepSource::kNvtxStepTable; plan.detail = "step table (NVTX)"; break;
  }
  return true;
}

bool from_ranges(const Model& m, StepPlan& plan) {
  struct Group {
    std::vector<const RangeRec*> ranges;
    int64_t total = 0;
    int32_t depth = INT32_MAX;
    bool profiler = false;
  };
  std::map<std::string, Group> groups;
  for (const auto& r : m.ranges) {
    if (!step_range_source(r.source) || r.end <= r.start) continue;
    std::string_view name = m.str(r.name);
    if (is_dataloader_range_name(name)) continue;
    Group& g = groups[std::string(strip_counter(name))];
    g.ranges.push_back(&r);
    g.total += r.end - r.start;
    g.depth = std::min(g.depth, r.depth < 0 ? 0 : r.depth);
    g.profiler = g.profiler || r.source == schema::range_source::profiler_step;
  }
  const std::string* best = nullptr;
  // ProfilerStep first, then step-like names, then the outermost level, then the most frequent, then the longest.
  auto key = [](const std::string& name, const Group& g) {
    return std::make_tuple(g.profiler, looks_like_step_name(name), -g.depth, g.ranges.size(), g.total);
  };
  for (const auto& [name, g] : groups) {
    if (g.ranges.size() < 2) continue;
    if (!best || key(name, g) > key(*best, groups[*best])) best = &name;
  }
  if (!best) return false;
  int64_t n = 0;
  for (const RangeRec* r : groups[*best].ranges) plan.all.push_back({n++, r->start, r->end});
  plan.source = StepSource::kRanges;
  plan.detail = "repeating range \"" + *best + "\"";
  return true;
}

// The launch sequence of a training loop repeats every step: the same
// kernels, copies and memsets in the same order. A name launched k times a
// step recurs in a cycle of k spacings that add up to the step's launch count,
// the period; each name's cycle proposes one. A proposal passes when (1) the
// sequence of names, in launch order, matches itself one period later at most
// places and (2) nearly every launch is of a name launched at least about once
// a period. A layer repeated inside the model recurs at a shorter spacing, but
// the kernels outside the layer stack (or of the backward pass, where the
// layers' kernels differ) run less than once per layer: (2) fails.
// Returns the periods that pass, smallest first. Looks at most kLaunchSample
// launches from the middle of the recording.
std::vector<size_t> launch_periods(const std::vector<uint32_t>& all) {
  constexpr size_t kLaunchSample = size_t{1} << 18;
  const size_t skip = all.size() > kLaunchSample ? (all.size() - kLaunchSample) / 2 : 0;
  const std::vector<uint32_t> names(all.begin() + static_cast<long>(skip),
                                    all.begin() + static_cast<long>(std::min(all.size(), skip + kLaunchSample)));
  std::unordered_map<uint32_t, std::vector<uint32_t>> where;
  for (uint32_t i = 0; i < names.size(); ++i) where[names[i]].push_back(i);
  constexpr size_t kMaxCycle = 64;  // a kernel run more often a step proposes nothing
  std::set<size_t> proposals;
  for (const auto& [name, at] : where) {
    if (at.size() < kMinLaunchSteps + 1) continue;
    std::vector<size_t> gaps;
    for (size_t i = 1; i < at.size(); ++i) gaps.push_back(at[i] - at[i - 1]);
    for (size_t k = 1; k <= kMaxCycle && k * kMinLaunchSteps <= gaps.size(); ++k) {
      size_t same = 0;
      for (size_t i = 0; i + k < gaps.size(); ++i) same += gaps[i] == gaps[i + k];
      if (static_cast<double>(same) < kLaunchRegularity * static_cast<double>(gaps.size() - k)) continue;
      std::unordered_map<size_t, size_t> sums;  // the cycle's length, from each place in it
      size_t sum = 0;
      for (size_t i = 0; i < gaps.size(); ++i) {
        sum += gaps[i];
        if (i >= k) sum -= gaps[i - k];
        if (i + 1 >= k) ++sums[sum];
      }
      const size_t period = std::max_element(sums.begin(), sums.end(), [](const auto& a, const auto& b) {
                              return a.second < b.second;
                            })->first;
      if (period >= kMinLaunchPeriod && period * kMinLaunchSteps <= names.size()) proposals.insert(period);
      break;
    }
  }
  const double n = static_cast<double>(names.size());
  std::vector<size_t> periods;
  for (size_t period : proposals) {  // smallest first
    const double repeats = n / static_cast<double>(period);
    double covered = 0;
    for (const auto& [name, at] : where)
      if (static_cast<double>(at.size()) >= kLaunchRegularity * repeats) covered += static_cast<double>(at.size());
    if (covered < kLaunchCoverage * n) continue;
    size_t same = 0;
    const size_t compared = names.size() - period;
    for (size_t i = 0; i < compared; ++i) same += names[i] == names[i + period];
    if (static_cast<double>(same) >= kLaunchRegularity * static_cast<double>(compared)) periods.push_back(period);
  }
  return periods;
}

// Where each step begins, as indices into the launches. The steady middle of
// the recording gives the step's kernel sequence, starting at the place in
// the period where the job's CPU paused longest before a launch (data loading,
// the wait for the last step's result); from there the steps are followed
// forwards and backwards, each where the sequence matches that one, found again
// near its expected place after an irregular stretch (warm-up, evaluation).
std::vector<size_t> step_starts(const std::vector<uint32_t>& names, const std::vector<int64_t>& times, size_t period) {
  const size_t n = names.size();
  std::vector<std::vector<double>> pauses(period);
  for (size_t i = std::max<size_t>(n / 4, 1); i + period <= n; ++i)
    pauses[i % period].push_back(static_cast<double>(times[i] - times[i - 1]));
  size_t phase = 0;
  double longest = -1;
  for (size_t p = 0; p < period; ++p)
    if (const double m = median(pauses[p]); m > longest) longest = m, phase = p;
  size_t first = n / 4 + (phase + period - n / 4 % period) % period;
  if (first + period > n) return {};
  const std::vector<uint32_t> sequence(names.begin() + static_cast<long>(first),
                                       names.begin() + static_cast<long>(first + period));
  // Whether the launches from `at` match the sequence; gives up at the first
  // mismatch too many. All matching together may compare kWalkWork names a
  // launch (a long stretch unlike the steps, scanned for the next one, ends
  // the walk there).
  constexpr size_t kWalkWork = 64;
  const size_t allowed = period - static_cast<size_t>(std::ceil(kLaunchRegularity * static_cast<double>(period)));
  size_t work = 0;
  auto matches = [&](size_t at) {
    if (at + period > n || work > kWalkWork * n) return false;
    size_t wrong = 0, i = 0;
    for (; i < period && wrong <= allowed; ++i) wrong += names[at + i] != sequence[i];
    work += i;
    return wrong <= allowed;
  };
  // The start nearest to `expected` within half a period, then the next one
  // anywhere in the direction of travel (+1 or -1) that begins with the
  // sequence's first kernel; SIZE_MAX when none.
  auto find = [&](size_t expected, int direction) -> size_t {
    for (size_t d = 0; d <= period / 2; ++d) {
      if (expected + d < n && matches(expected + d)) return expected + d;
      if (d <= expected && matches(expected - d)) return expected - d;
    }
    for (size_t at = expected; at < n && work <= kWalkWork * n; at += direction)
      if (names[at] == sequence[0] && matches(at)) return at;
    return SIZE_MAX;
  };
  std::vector<size_t> starts{first};
  for (size_t at = first; at + 2 * period <= n;) {
    at = find(at + period, +1);
    if (at == SIZE_MAX) break;
    starts.push_back(at);
  }
  for (size_t at = first; at >= period;) {
    at = find(at - period, -1);
    if (at == SIZE_MAX) break;
    starts.push_back(at);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

}  // namespace

bool from_launch_sequence(const Model& m, StepPlan& plan) {
  const IdMap launch = apis_by_correlation(m);
  // Kernels, copies and memsets in launch order, at their launch on the CPU
  // (at their start on the GPU when the launch was not recorded). A copy or
  // memset stands in the sequence by its kind (the batch's copy to the device
  // marks a step of a model whose layers are all alike).
  std::vector<std::pair<int64_t, uint32_t>> launches;
  launches.reserve(m.kernels.size() + m.copies.size());
  auto add = [&](uint32_t corr, int64_t start, uint32_t name) {
    const uint32_t a = launch.find(corr);
    launches.push_back({a == kNone ? start : m.apis[a].start, name});
  };
  for (const KernelRec& k : m.kernels) add(k.corr, k.start, k.name);
  constexpr uint32_t kCopyNames = 0xffffff00u;  // above every string id
  for (const CopyRec& c : m.copies) add(c.corr, c.start, kCopyNames | (c.memset ? 0xffu : c.copy_kind));
  if (launches.size() < kMinLaunchPeriod * kMinLaunchSteps) return false;
  std::stable_sort(launches.begin(), launches.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint32_t> names;
  std::vector<int64_t> times;
  for (const auto& [t, name] : launches) {
    times.push_back(t);
    names.push_back(name);
  }
  // The smallest period whose steps take at least kMinLaunchStepNs (median):
  // a model whose layers are all alike, run forward only, repeats every layer
  // too, in steps too short to be the job's.
  std::vector<StepWindow> steps;
  size_t period = 0;
  for (size_t p : launch_periods(names)) {
    // A step from one start to the next; a longer stretch between two starts
    // (evaluation, a pause) is no step.
    const std::vector<size_t> starts = step_starts(names, times, p);
    std::vector<StepWindow> found;
    std::vector<double> lengths;
    for (size_t i = 0; i + 1 < starts.size(); ++i)
      if (starts[i + 1] - starts[i] <= p + p / 2) {
        found.push_back({static_cast<int64_t>(found.size()), times[starts[i]], times[starts[i + 1]]});
        lengths.push_back(static_cast<double>(found.back().duration()));
      }
    if (found.size() < kMinLaunchSteps) continue;
    const bool long_enough = median(lengths) >= static_cast<double>(kMinLaunchStepNs);
    if (period == 0 || long_enough) {
      steps = std::move(found);
      period = p;
    }
    if (long_enough) break;
  }
  if (period == 0) return false;
  plan.all = std::move(steps);
  plan.analysed.clear();
  plan.source = StepSource::kLaunchSequence;
  plan.detail = "kernel launch sequence, repeating every " + std::to_string(period) + " launches";
  return true;
}

namespace {

// Steps (by start) wholly inside one of the windows (by start); all of them
// when there are no windows.
std::vector<StepWindow> traced_steps(const std::vector<StepWindow>& steps,
                                     const std::vector<std::pair<int64_t, int64_t>>& windows) {
  if (windows.empty()) return steps;
  std::vector<StepWindow> out;
  size_t w = 0;
  for (const auto& s : steps) {
    while (w < windows.size() && windows[w].second < s.start) ++w;
    if (w < windows.size() && windows[w].first <= s.start && s.end <= windows[w].second) out.push_back(s);
  }
  return out;
}

// Sampled recordings: the median traced and untraced step (both in the order
// of plan.all, traced ones a subsequence of it). Steps that straddle a switch
// count as untraced; the medians keep them from mattering.
void note_tracing_cost(StepPlan& plan, const std::vector<StepWindow>& traced) {
  std::vector<double> on, off;
  size_t t = 0;
  for (const auto& s : plan.all) {
    const bool is_traced = t < traced.size() && traced[t].start == s.start && traced[t].end == s.end;
    if (is_traced) ++t;
    (is_traced ? on : off).push_back(static_cast<double>(s.duration()) / 1e6);
  }
  if (on.size() < kMinStepsForCost || off.size() < kMinStepsForCost) return;
  plan.traced_ms_median = median(on);
  plan.untraced_ms_median = median(off);
}

// Untraced stretches measured on the GPU: each holds the GPU work of the steps
// whose CPU end falls inside it (the drain at its start came at the first API
// call of the first untraced step, the one at its end after the last).
void note_drained(StepPlan& plan, const std::vector<std::pair<int64_t, int64_t>>& spans) {
  int64_t total_ns = 0, steps = 0;
  for (const auto& [a, b] : spans) {
    int64_t n = 0;
    for (const auto& s : plan.all) n += s.end > a && s.end <= b;
    if (n < 2) continue;  // too short to say anything
    total_ns += b - a;
    steps += n;
  }
  if (steps < static_cast<int64_t>(kMinStepsForCost)) return;
  plan.untraced_drained_ms = static_cast<double>(total_ns) / 1e6 / static_cast<double>(steps);
  plan.untraced_drained_steps = steps;
}

// "3-9, 20-27": step numbers in runs, for messages.
std::string describe_numbers(const std::vector<StepWindow>& steps) {
  std::vector<int64_t> v;
  for (const auto& s : steps) v.push_back(s.number);
  std::sort(v.begin(), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
  return (lo + hi) / 2;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

StepPlan plan_steps(const Model& m, const Options& opt) {
  StepPlan plan;
  StepPlan by_ranges;
  const bool have_ranges = from_ranges(m, by_ranges);
  const bool have_table = from_step_table(m, plan);
  // A step table that misses most steps (a step replayed as a CUDA graph never calls
  // the optimizer from Python) loses to step-like ranges that see them all.
  if (have_table && have_ranges && by_ranges.all.size() >= 2 * plan.all.size() &&
      by_ranges.detail.find("step") != std::string::npos) {
    by_ranges.detail += " (the step table has only " + std::to_string(plan.all.size()) + " steps)";
    plan = std::move(by_ranges);
  } else if (!have_table && have_ranges) {
    plan = std::move(by_ranges);
  }
  if (!have_table && !have_ranges) return plan;  // the launch sequence may still have some, once events are loaded
  select_steps(plan, m, opt);
  return plan;
}

void select_steps(StepPlan& plan, const Model& m, const Options& opt) {
  std::sort(plan.all.begin(), plan.all.end(), [](const StepWindow& a, const StepWindow& b) { return a.start < b.start; });
  // A capture writes its traced stretch as a sampling window when it begins:
  // one without any ended inside its control stretch (the block raised or was
  // short), so its steps ran untraced and hold nothing to analyse.
  if (m.capture && m.sampling_windows.empty() && !plan.all.empty())
    throw Error(m.path + ": no step was traced: the capture ended inside its control stretch, after " +
                std::to_string(plan.all.size()) + " untraced step" + (plan.all.size() == 1 ? "" : "s") +
                " (capture a longer stretch, or skip the control stretch: gpuscope.profile(control=False), "
                "gpuscope trigger --control 0)");
  // A sampled recording traced some steps whole and others not at all: only
  // the traced ones say anything about the GPU.
  std::vector<StepWindow> candidates = traced_steps(plan.all, m.sampling_windows);
  plan.untraced = static_cast<int64_t>(plan.all.size() - candidates.size());
  if (plan.untraced > 0) note_tracing_cost(plan, candidates);
  if (plan.untraced > 0) note_drained(plan, m.untraced_spans);
  if (candidates.empty())
    throw Error(m.path + ": sampled recording, but none of its " + std::to_string(plan.all.size()) +
                " steps lies wholly inside a traced stretch (record with a longer --sample ON time)");
  if (opt.first_step || opt.last_step) {
    int64_t lo = opt.first_step.value_or(INT64_MIN), hi = opt.last_step.value_or(INT64_MAX);
    for (const auto& s : candidates)
      if (s.number >= lo && s.number <= hi) plan.analysed.push_back(s);
    if (plan.analysed.empty() && plan.untraced > 0) {
      throw Error(m.path + ": none of steps " + (opt.first_step ? std::to_string(lo) : "") + "-" +
                  (opt.last_step ? std::to_string(hi) : "") + " was traced (sampled recording; traced steps: " +
                  describe_numbers(candidates) + ")");
    }
    if (plan.analysed.empty()) {
      int64_t a = INT64_MAX, b = INT64_MIN;
      for (const auto& s : plan.all) a = std::min(a, s.number), b = std::max(b, s.number);
      throw Error(m.path + ": no steps numbered " + (opt.first_step ? std::to_string(lo) : "") + "-" +
                  (opt.last_step ? std::to_string(hi) : "") + " (the recording has steps " + std::to_string(a) + "-" +
                  std::to_string(b) + ")");
    }
    return;
  }
  // Which steps are candidates (both lists by start).
  std::vector<bool> traced(plan.all.size(), false);
  for (size_t i = 0, t = 0; i < plan.all.size() && t < candidates.size(); ++i)
    if (candidates[t].start == plan.all[i].start) traced[i] = true, ++t;
  // One control stretch (`gpuscope record`'s default): the traced steps before
  // it are the job's warm-up, the first one after it pays for CUPTI resuming.
  if (plan.untraced > 0) {
    size_t last_off = 0, runs = 0;
    for (size_t i = 0; i < plan.all.size(); ++i) {
      if (traced[i]) continue;
      if (i == 0 || traced[i - 1]) ++runs;
      last_off = i;
    }
    std::vector<StepWindow> after;
    for (const auto& s : candidates)
      if (s.start > plan.all[last_off].start) after.push_back(s);
    if (runs == 1 && after.size() >= 4) {
      plan.after_control = true;
      plan.warmup_skipped = static_cast<int64_t>(candidates.size() - after.size() + 1);
      plan.analysed.assign(after.begin() + 1, after.end());
      return;
    }
  }
  // Several traced stretches (`--sample`): each one after the first begins
  // with a step that pays for CUPTI resuming (the kernels instrumented anew
  // after a teardown, tens of ms on the H200). Like the step after the control
  // stretch it is left out, where its stretch has steps to spare.
  if (plan.untraced > 0) {
    std::vector<StepWindow> kept;
    for (size_t i = 0; i < plan.all.size(); ++i) {
      if (!traced[i]) continue;
      if (!kept.empty() && !traced[i - 1]) {  // the first step of a later stretch
        size_t stretch = 1;
        while (stretch < kMinStretchForResume && i + stretch < plan.all.size() && traced[i + stretch]) ++stretch;
        if (stretch >= kMinStretchForResume) {
          ++plan.resume_skipped;
          continue;
        }
      }
      kept.push_back(plan.all[i]);
    }
    candidates = std::move(kept);
  }
  const size_t n = candidates.size();
  size_t skip = 0;
  if (n >= 3) {
    std::vector<double> d;
    for (const auto& s : candidates) d.push_back(static_cast<double>(s.duration()));
    double med = median(d);
    skip = 1;
    while (skip < n / 4 && d[skip] > kWarmupFactor * med) ++skip;
  }
  plan.warmup_skipped = static_cast<int64_t>(skip) + plan.resume_skipped;
  plan.analysed.assign(candidates.begin() + static_cast<long>(skip), candidates.end());
}

void extend_steps_to_gpu(StepPlan& plan, const Model& m) {
  if (plan.source == StepSource::kWholeRecording || plan.all.empty() || m.apis.empty()) return;
  const IdMap launch = apis_by_correlation(m);
  std::vector<StepWindow>& steps = plan.all;  // sorted by start
  // Steps that overlap on the CPU (ranges from several threads) have no single
  // step period to find: leave them as they are.
  for (size_t i = 1; i < steps.size(); ++i)
    if (steps[i].start < steps[i - 1].end) return;
  std::vector<int64_t> gpu_end(steps.size(), INT64_MIN);
  auto note = [&](uint32_t corr, int64_t end) {
    const uint32_t a = launch.find(corr);
    if (a == kNone) return;
    const int64_t t = m.apis[a].start;
    auto it = std::upper_bound(steps.begin(), steps.end(), t, [](int64_t v, const StepWindow& s) { return v < s.start; });
    if (it == steps.begin()) return;
    const size_t i = static_cast<size_t>(it - steps.begin()) - 1;
    if (t < steps[i].end) gpu_end[i] = std::max(gpu_end[i], end);
  };
  for (const auto& k : m.kernels) note(k.corr, k.end());
  for (const auto& c : m.copies) note(c.corr, c.end());
  plan.cpu_all = steps;
  int64_t prev_end = INT64_MIN;
  bool changed = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    StepWindow& s = steps[i];
    const int64_t end = std::max(s.end, gpu_end[i]);
    const int64_t start = std::min(std::max(s.start, prev_end), end);
    changed = changed || end != s.end || start != s.start;
    s.start = start;
    s.end = end;
    prev_end = end;
  }
  if (!changed) return;
  std::map<int64_t, StepWindow> by_number;
  for (const auto& s : steps) by_number[s.number] = s;
  for (auto& s : plan.analysed)
    if (auto it = by_number.find(s.number); it != by_number.end()) s = it->second;
  plan.detail += ", each until its GPU work ended";
}

void plan_whole_recording(StepPlan& plan, const Model& m) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](int64_t s, int64_t e) {
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  };
  for (const auto& k : m.kernels) span(k.start, k.end());
  for (const auto& c : m.copies) span(c.start, c.end());
  for (const auto& a : m.apis) span(a.start, a.end());
  for (const auto& o : m.ops) span(o.start, o.end);
  for (const auto& r : m.ranges) span(r.start, r.end);
  plan.source = StepSource::kWholeRecording;
  plan.detail = "the whole recording as one step (no steps found)";
  plan.all.clear();
  if (lo < hi) plan.all.push_back({0, lo, hi});
  plan.analysed = plan.all;
  plan.warmup_skipped = 0;
}

}  // namespace gpuscope::analyzer
