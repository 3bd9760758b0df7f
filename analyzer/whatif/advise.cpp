#include "analyzer/whatif/advise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "analyzer/rules/rule_util.h"
#include "analyzer/untraced.h"
#include "trace_formats/common/text.h"
#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/fixes.h"
#include "analyzer/whatif/step_graph.h"

namespace gpuscope::analyzer::whatif {
namespace {

// CUPTI's cost per API record tops out around here; a fit above it means the
// replay misses something else the tracer slowed.
constexpr double kMaxCallCostUs = 25;
// The untraced CPU ran ahead of the GPU when its steps took less than this
// share of the untraced step: its step time is then its own pace.
constexpr double kCpuAheadShare = 0.97;
// Tracing's cost where the recording cannot tell it (the GPU sets the step's
// pace): per CUDA call and per torch op, solved from the fits on the CPU-paced
// real models recorded on the H100 with `record`'s defaults (an LSTM language
// model: 1975 calls and ~320 ops a step; T5-small: 1915 calls, ~11800 ops),
// which the others then check (shared/ground-truth, docs/rules.md "Scorecard").
constexpr double kDefaultCallCostUs = 7.0;
constexpr double kDefaultOpCostUs = 0.8;
// The fit scales the default costs by at most this much.
constexpr double kMaxCostScale = 25 / kDefaultCallCostUs;
// Replays within this share of the job's step count as giving it.
constexpr double kIdentityNoise = 0.02;
// A call keeps at least this much of its own time.
constexpr double kCallFloorNs = 300;
// A plan step must save this share of the job's step over the step before it.
constexpr double kPlanMinSavingPct = 2;
constexpr size_t kMaxPlanSteps = 4;
// A fix whose range alone reaches a step this much slower might slow the job
// (about the spread of a step time measured twice: the ground truth's README).
constexpr double kRiskAlonePct = 1;
// A fix predicted to save at least this much gets a finding of its own when no
// rule named it: above the replay's error on the real models it was checked
// against (torch.compile predicted 1.2-1.3x its measured saving on ResNet-50 and
// a bf16 GPT, and 5.6 % where it measured -0.9 %: docs/rules.md, "What-if").
constexpr double kOwnFindingPct = 8;
// Above this many CPU tasks the graph is rebuilt from fewer steps (each replay copies it).
constexpr size_t kMaxCpuTasks = 300'000;

constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kRuleFix{{
    {"amp", "amp"},
    {"channels-last", "channels-last"},
    {"fused-optimizer", "fused-optimizer"},
    {"fusion", "compile"},
    {"launch-bound", "cuda-graphs"},
    {"host-sync", "host-sync"},
    {"dataloader-stall", "dataloader-stall"},
    {"pageable-memcpy", "pageable-memcpy"},
}};

// Tracing's cost: per CUDA call (CUPTI's API and activity records) and per
// torch op (RecordFunction's callbacks, on in every step to find the steps).
// A call's share comes off its own time, down to the floor a call keeps; what
// its time cannot hold, and the ops', was spent outside it (CUPTI's callback
// work around the record's timestamps, the op callbacks), in the CPU time
// before it.
struct TracingCost {
  double per_call = 0, per_op = 0;  // ns
  TracingCost scaled(double s) const { return {per_call * s, per_op * s}; }
};

Graph without_tracing(const Graph& g, TracingCost cost) {
  Graph out = g;
  for (CpuTask& t : out.cpu) {
    const double keep = std::min(t.dur, kCallFloorNs);
    const double inside = std::min(cost.per_call, t.dur - keep);
    t.dur -= inside;
    t.gap = std::max(0.0, t.gap - (cost.per_call - inside) - cost.per_op * t.ops);
  }
  return out;
}

// The step the CPU alone would take: the graph replayed with GPU work that
// takes no time (what the CPU's steps measure where it runs ahead of the GPU).
double cpu_pace(const Graph& g) {
  Graph x = g;
  for (GpuTask& k : x.gpu) k.dur = 0;
  x.gpu_gap = 0;
  return replay(x).step_ms;
}

// Predictions are anchored to the job's step (scaled by it over the replay's),
// which takes the replay's error out of them to first order; half of it
// widens every range.
double margin_of(double identity_error_pct) { return std::min(0.25, std::abs(identity_error_pct) / 200); }

struct Priced {
  double mid = 0, lo = 0, hi = 0;
  double hi_fix = 0;  // hi from the fixes' own bounds, without the identity replay's error
  double cpu_ms = 0, gpu_ms = 0;
};

struct Pricer {
  const Graph& base;
  const JobTraits& traits;
  const Calibration& cal;
  double anchor = 1;   // job step / replayed step
  double margin = 0;   // the identity replay's error, added to the range

  Priced operator()(const std::vector<const Fix*>& fixes) const {
    Priced p;
    double at[3] = {0, 0, 0};
    const Bound bounds[3] = {Bound::kMid, Bound::kLo, Bound::kHi};
    for (int i = 0; i < 3; ++i) {
      Graph g = base;
      for (const Fix* f : fixes) f->apply(g, traits, cal, bounds[i]);
      const Replay r = replay(g);
      at[i] = r.step_ms * anchor;
      if (i == 0) p.cpu_ms = r.cpu_busy_ms, p.gpu_ms = r.gpu_busy_ms;
    }
    p.mid = at[0];
    p.lo = std::min({at[0], at[1], at[2]}) * (1 - margin);
    p.hi_fix = std::max({at[0], at[1], at[2]});
    p.hi = p.hi_fix * (1 + margin);
    return p;
  }
};

std::string ms2(double v) { return format_fixed(v, 2); }
// "+12.3" / "-4.5"
std::string signed_pct(double v) { return (v >= 0 ? "+" : "") + format_fixed(v, 1); }

// "amp: predicted 12.34 ms a step (-15.0 %)"
std::string predicted(std::string_view fix, double step_ms, double saving_pct) {
  return std::string(fix) + ": predicted " + ms2(step_ms) + " ms a step (" + signed_pct(-saving_pct) + " %)";
}

// The fixes (cumulative) priced at `p`, as a plan lists them.
PlanStep plan_step(const std::vector<const Fix*>& fixes, const Priced& p, double job) {
  PlanStep step;
  for (const Fix* f : fixes) step.fixes.push_back(std::string(f->id));
  step.step_ms = p.mid, step.lo_ms = p.lo, step.hi_ms = p.hi;
  step.saving_pct = 100 * (1 - p.mid / job);
  return step;
}

// A finding takes the replay's prediction for its fix.
void take_prediction(Finding& f, const FixPrediction& p, double job) {
  f.fix_id = p.fix;
  f.predicted_step_ms = p.step_ms;
  f.saving_ms_per_step = job - p.step_ms;
  f.saving_pct = 100 * f.saving_ms_per_step / job;
  f.saving_lo_pct = 100 * (1 - p.hi_ms / job);
  f.saving_hi_pct = 100 * (1 - p.lo_ms / job);
  f.severity = severity_of(f.saving_pct, f.id);
  f.evidence.metrics.push_back({"predicted_step_ms", p.step_ms, "ms"});
}

// Why a fix the replay prices as slower is slower: which side grew.
std::string slower_because(const Fix& f, const Graph& base, const Priced& alone, const Replay& before) {
  if (f.id == "channels-last")
    for (const GpuTask& k : base.gpu)
      if (k.kind == Kind::kGroupNorm) return "group norm kernels run slower on channels_last tensors";
  if (alone.cpu_ms > before.cpu_busy_ms * 1.01)
    return "it adds CPU work per op (" + ms2(alone.cpu_ms - before.cpu_busy_ms) +
           " ms a step) to a step whose pace the CPU's launches set";
  if (f.id == "amp")
    for (const GpuTask& k : base.gpu)
      if (k.kind == Kind::kRnn) return "cuDNN's RNN kernels do not run faster in bf16 on this GPU";
  return "its kernels run slower on this GPU (calibration)";
}

}  // namespace

std::string_view fix_of_rule(std::string_view rule_id) {
  for (auto [rule, fix] : kRuleFix)
    if (rule == rule_id) return fix;
  return {};
}

Prices price_fixes(const Graph& base, const JobTraits& traits, const Calibration& cal, double job, double margin,
                   const std::vector<std::vector<std::string>>& asked) {
  Prices out;
  const Replay before = replay(base);
  if (before.step_ms <= 0) return out;
  const Pricer price{base, traits, cal, job / before.step_ms, margin};
  // Fixes the plan may take: those that, applied alone, cannot slow the job.
  // One predicted slower alone, or whose own bounds alone (the replay's error,
  // which every fix shares, aside) reach a step more than the timings' own
  // spread slower, stays out even where it would save after
  // others (amp once CUDA graphs took its CPU cost away): users apply a plan's
  // fixes one at a time, and often stop before the end.
  std::vector<const Fix*> usable, risky;
  for (const Fix& f : all_fixes()) {
    FixPrediction p;
    p.fix = std::string(f.id);
    p.title = std::string(f.title);
    p.why_not = f.why_not(base, traits);
    p.applies = p.why_not.empty();
    if (p.applies) {
      const Priced r = price({&f});
      p.step_ms = r.mid, p.lo_ms = r.lo, p.hi_ms = r.hi;
      p.saving_pct = 100 * (1 - r.mid / job);
      p.cpu_ms = r.cpu_ms, p.gpu_ms = r.gpu_ms;
      p.might_slow = r.mid > job || r.hi_fix > job * (1 + kRiskAlonePct / 100);
      (p.might_slow ? risky : usable).push_back(&f);
      if (p.saving_pct >= kPlanMinSavingPct && p.might_slow) {
        out.not_recommended.push_back(predicted(f.id, r.mid, p.saving_pct) + ", but its range reaches " + ms2(r.hi) +
                                      " ms (" + signed_pct(100 * (r.hi / job - 1)) +
                                      " %): it might slow the job; measure it before adopting it");
        out.measure_first.push_back(plan_step({&f}, r, job));
      }
      else if (p.saving_pct < -1)
        out.not_recommended.push_back(predicted(f.id, r.mid, p.saving_pct) + ": " + slower_because(f, base, r, before));
      else if (f.id == "channels-last" && p.saving_pct < kPlanMinSavingPct)
        out.not_recommended.push_back(predicted(f.id, r.mid, p.saving_pct) + ": too little to gain on this model");
    }
    out.fixes.push_back(std::move(p));
  }

  // The plan: apply the fix that gives the shortest step, replay, choose again.
  std::vector<const Fix*> chosen;
  double current = job;
  while (chosen.size() < kMaxPlanSteps) {
    const Fix* best = nullptr;
    Priced best_p;
    for (const Fix* f : usable) {
      if (std::find(chosen.begin(), chosen.end(), f) != chosen.end()) continue;
      std::vector<const Fix*> trial = chosen;
      trial.push_back(f);
      const Priced p = price(trial);
      if (p.hi > current) continue;  // might slow the step it starts from
      if (!best || p.mid < best_p.mid) best = f, best_p = p;
    }
    if (!best || 100 * (current - best_p.mid) / job < kPlanMinSavingPct) break;
    chosen.push_back(best);
    out.plan.push_back(plan_step(chosen, best_p, job));
    current = best_p.mid;
  }
  if (!chosen.empty())
    for (const Fix* f : risky) {
      std::vector<const Fix*> trial = chosen;
      trial.push_back(f);
      const Priced p = price(trial);
      if (p.hi > current || 100 * (current - p.mid) / job < kPlanMinSavingPct) continue;
      std::string after;
      for (const Fix* c : chosen) after += (after.empty() ? "" : ", ") + std::string(c->id);
      out.not_recommended.push_back(std::string(f->id) + ": after " + after + ", predicted " + ms2(p.mid) +
                                    " ms a step (" + signed_pct(-100 * (1 - p.mid / job)) +
                                    " % in all), but alone it might slow the job: measure it once they are applied "
                                    "(gpuscope try)");
      out.measure_first.push_back(plan_step(trial, p, job));
    }

  for (const auto& ids : asked) {
    WhatIf::Asked q;
    q.asked = ids;
    std::vector<const Fix*> fixes;
    for (const auto& id : ids) {
      const Fix* f = find_fix(id);
      if (f && f->why_not(base, traits).empty() && std::find(fixes.begin(), fixes.end(), f) == fixes.end()) {
        fixes.push_back(f);
        q.fixes.push_back(id);
      } else {
        q.skipped.push_back(id);
      }
    }
    const Priced p = price(fixes);
    q.step_ms = p.mid, q.lo_ms = p.lo, q.hi_ms = p.hi;
    q.saving_pct = 100 * (1 - p.mid / job);
    out.asked.push_back(std::move(q));
  }
  return out;
}

void advise(const Context& c, Analysis& a, const std::vector<std::vector<std::string>>& asked) {
  WhatIf& w = a.whatif;
  if (c.device < 0) {
    w.unavailable = "no GPU activity";
    return;
  }
  Graph g = build_graph(c);
  if (g.cpu.size() > kMaxCpuTasks && g.steps > 4) {
    const size_t fewer = std::max<size_t>(4, static_cast<size_t>(g.steps) * kMaxCpuTasks / g.cpu.size());
    g = build_graph(c, fewer);
  }
  if (g.steps < 2 || g.gpu.empty()) {
    w.unavailable = g.steps < 2 ? "fewer than 2 analysed steps to replay" : "no GPU work launched in the analysed steps";
    return;
  }
  const DeviceInfo* dev = c.m.device(c.device);
  const Calibration& cal = calibration_for(dev ? dev->name : std::string(), c.calibrations);
  w.calibration = cal.file;
  w.calibration_measured = cal.measured;
  w.steps = g.steps;
  w.traced_step_ms = g.traced_step_ms;
  const Summary& s = a.summary;
  w.job_step_ms = s.untraced_step_ms > 0 ? s.untraced_step_ms : g.traced_step_ms;

  // The model's own check: replayed as recorded it must give the traced step;
  // with tracing's per-call cost taken off, the untraced one. That cost is
  // fitted to what the control stretch measured: where the untraced CPU ran
  // ahead of the GPU (its steps shorter than the untraced step), to the CPU's
  // own pace, which the GPU-bound step does not show; else to the untraced step.
  const Replay traced = replay(g);
  w.replay_traced_ms = traced.step_ms;
  const double cpu_target = s.untraced_step_ms_median;
  const bool cpu_ahead = cpu_target > 0 && s.untraced_step_ms > 0 && cpu_target < kCpuAheadShare * s.untraced_step_ms;
  const TracingCost unit{kDefaultCallCostUs * 1e3, kDefaultOpCostUs * 1e3};
  auto measure = [&](double scale) {
    const Graph x = without_tracing(g, unit.scaled(scale));
    return cpu_ahead ? cpu_pace(x) : replay(x).step_ms;
  };
  const double target = cpu_ahead ? cpu_target : s.untraced_step_ms;
  // Fitted where the job shows it (the replay with the defaults off misses the
  // untraced step); a step the GPU sets the pace of does not show the CPU's
  // cost, and the defaults stand in.
  auto fit = [&](double lo, double hi) {
    for (int i = 0; i < 40 && hi - lo > 1e-3; ++i) {
      const double mid = (lo + hi) / 2;
      (measure(mid) > target ? lo : hi) = mid;
    }
    return hi;
  };
  double scale = 1;
  if (target > 0) {
    const double at_default = measure(1);
    if (at_default > target * (1 + kIdentityNoise) && measure(kMaxCostScale) <= target)
      scale = fit(1, kMaxCostScale);
    else if (at_default < target * (1 - kIdentityNoise) && measure(0) >= target)
      scale = fit(0, 1);
  }
  w.cpu_pace_target_ms = cpu_ahead ? cpu_target : 0;
  const TracingCost cost = unit.scaled(scale);
  const Graph base = without_tracing(g, cost);
  const Replay before = replay(base);
  w.tracing_cost_per_call_us = cost.per_call / 1e3;
  w.tracing_cost_per_op_us = cost.per_op / 1e3;
  w.replay_ms = before.step_ms;
  if (before.step_ms <= 0) {
    w.unavailable = "the replay gave no step time";
    return;
  }
  w.identity_error_pct = 100 * (before.step_ms / w.job_step_ms - 1);
  if (s.untraced_step_ms <= 0 && traced.step_ms > 0 && g.traced_step_ms > 0) {
    // No untraced step (every step traced, an import, or a control stretch
    // that was not the steady state: check_untraced): the job's step is the
    // traced one less what the replay says tracing cost it, and the model's
    // check is the replay as recorded against the traced step.
    w.job_step_ms = g.traced_step_ms * before.step_ms / traced.step_ms;
    w.identity_error_pct = 100 * (traced.step_ms / g.traced_step_ms - 1);
  }
  w.cpu_ms = before.cpu_busy_ms;
  w.gpu_ms = before.gpu_busy_ms;
  w.queue_full_launches = g.queue_full_launches;
  w.available = true;

  JobTraits traits = job_traits(g, c.m.torch_compile);
  const ConvLayout layout = inductor_conv_layout(c.m);
  traits.inductor_layout = layout.layout;
  // A job that replays CUDA graphs launches them from steps the torch plugin
  // may not see (optimizer.step inside the graph): any graph launch in the
  // recording says the job uses them.
  traits.cuda_graphs = traits.cuda_graphs || std::any_of(c.m.apis.begin(), c.m.apis.end(), [&](const ApiRec& x) {
                         return is_graph_launch(c.m.str(x.name));
                       });
  const double job = w.job_step_ms;
  {
    std::map<std::string, double> by_kind;
    for (const GpuTask& k : g.gpu) by_kind[kind_name(k.kind)] += k.dur / 1e6 / g.steps;
    for (const auto& [kind, ms] : by_kind) w.gpu_ms_by_kind.push_back({kind, ms});
    std::sort(w.gpu_ms_by_kind.begin(), w.gpu_ms_by_kind.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  }
  Prices prices = price_fixes(base, traits, cal, job, margin_of(w.identity_error_pct), asked);
  w.fixes = std::move(prices.fixes);
  w.plan = std::move(prices.plan);
  w.not_recommended = std::move(prices.not_recommended);
  w.measure_first = std::move(prices.measure_first);
  w.asked = std::move(prices.asked);
  // Findings whose fix the replay prices take its prediction; one predicted to
  // slow the job is dropped; a fix that saves and that no rule named gets its own.
  auto prediction = [&](std::string_view fix) -> const FixPrediction* {
    for (const auto& p : w.fixes)
      if (p.fix == fix) return &p;
    return nullptr;
  };
  std::vector<Finding> kept;
  std::vector<std::string> named;
  for (Finding& f : a.findings) {
    const std::string_view fix = fix_of_rule(f.id);
    const FixPrediction* p = fix.empty() ? nullptr : prediction(fix);
    if (!p) {
      kept.push_back(std::move(f));
      continue;
    }
    named.push_back(p->fix);
    if (!p->applies) {
      if (p->why_not.starts_with("already")) {
        a.notes.push_back("dropped finding " + f.id + ": the job " + p->why_not);
        continue;
      }
      kept.push_back(std::move(f));  // not replayed (e.g. shapes change): the rule's own estimate stands
      continue;
    }
    if (p->might_slow) {
      a.notes.push_back("dropped finding " + f.id + ": the what-if replay's range for its fix reaches a slower step (" +
                        ms2(p->lo_ms) + "-" + ms2(p->hi_ms) + " ms against the job's " + ms2(job) + " ms)");
      continue;
    }
    if (100 * (job - p->step_ms) / job < std::max(min_saving_pct(f.id), 0.5)) {
      a.notes.push_back("dropped finding " + f.id + ": the what-if replay predicts " + ms2(p->step_ms) +
                        " ms a step with its fix against the job's " + ms2(job) + " ms");
      continue;
    }
    take_prediction(f, *p, job);
    f.evidence.summary += " Replayed with the fix, the step takes " + ms2(p->step_ms) + " ms (" + ms2(p->lo_ms) + "-" +
                          ms2(p->hi_ms) + ") against " + ms2(job) + " ms.";
    kept.push_back(std::move(f));
  }
  for (const FixPrediction& p : w.fixes) {
    if (!p.applies || p.saving_pct < kOwnFindingPct || p.might_slow) continue;
    if (std::find(named.begin(), named.end(), p.fix) != named.end()) continue;
    const Fix* fx = find_fix(p.fix);
    Finding f;
    f.id = p.fix;
    f.title = std::string(fx->title) + " would shorten the step";
    take_prediction(f, p, job);
    f.evidence.summary = "Replaying the " + std::to_string(w.steps) + " analysed steps with " + std::string(fx->title) +
                         " applied gives " + ms2(p.step_ms) + " ms a step (" + ms2(p.lo_ms) + "-" + ms2(p.hi_ms) +
                         ") against the job's " + ms2(job) + " ms.";
    f.fix.text = "Apply " + std::string(fx->title) + ".";
    f.fix.code = std::string(fx->code);
    kept.push_back(std::move(f));
  }
  rank_findings(kept);
  a.findings = std::move(kept);
}

}  // namespace gpuscope::analyzer::whatif
