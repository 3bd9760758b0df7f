#include "analyzer/untraced.h"

#include <algorithm>
#include <climits>
#include <string_view>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule.h"
#include "analyzer/rules/rule_util.h"
#include "trace_formats/common/text.h"

namespace gpuscope::analyzer {
namespace {

// Queued gaps needed before their median stands for the GPU's own gap.
constexpr size_t kMinQueuedGaps = 20;
// Step times vary this much from one stretch of a job to the next (noise).
constexpr double kStepNoiseShare = 0.08;

// Rules whose saving is GPU idle time while the CPU does something: tracing
// stretches that CPU time, so they claim only the idle time that exists untraced.
bool cpu_side(std::string_view id) {
  return id == "low-utilization" || id == "launch-bound" || id == "host-sync" || id == "dataloader-stall" ||
         id == "allocator-churn" || id == "memory-pressure";
}

// CPU-side rules whose idle is the short gaps between one kernel and the next.
bool between_kernels(std::string_view id) { return id == "launch-bound" || id == "low-utilization"; }

// Time the job spends compiling is what it is, traced or not; and a cross-rank
// finding is a difference between ranks, each traced alike, so tracing cancels out.
bool unscaled(std::string_view id) {
  if (id == "recompile") return true;
  for (const CrossRankRule* r : cross_rank_rules())
    if (r->id == id) return true;
  return false;
}

}  // namespace

double min_saving_pct(std::string_view id) {
  for (const Rule* r : all_rules())
    if (r->id == id)
      for (const auto& t : r->thresholds)
        if (t.name == "kMinSavingPct") return t.value;
  for (const CrossRankRule* r : cross_rank_rules())
    if (r->id == id)
      for (const auto& t : r->thresholds)
        if (t.name == "kMinSavingPct") return t.value;
  return 0;
}

Severity severity_of(double pct, std::string_view id) {
  if (pct >= kHighSeverityPct) return Severity::kHigh;
  if (pct >= kMediumSeverityPct || id == "memory-pressure") return Severity::kMedium;
  return Severity::kLow;
}

void rank_findings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& x, const Finding& y) {
    return x.saving_ms_per_step != y.saving_ms_per_step ? x.saving_ms_per_step > y.saving_ms_per_step : x.id < y.id;
  });
}

void measure_untraced(Analysis& a, const StepPlan& plan, bool imported) {
  Summary& s = a.summary;
  s.traced_step_ms = s.step_ms_mean;
  if (plan.untraced_drained_ms > 0) {
    s.untraced_step_ms = plan.untraced_drained_ms;
    s.untraced_method = "gpu_drained";
  } else if (plan.untraced_ms_median > 0) {
    s.untraced_step_ms = plan.untraced_ms_median;
    s.untraced_method = "cpu_steps";
  } else if (imported) {
    s.untraced_unknown = "an imported trace has no untraced steps";
  } else if (s.step_source == StepSource::kWholeRecording) {
    s.untraced_unknown = "the job has no steps";
  } else if (plan.untraced == 0) {
    s.untraced_unknown = "every step was traced (record --full, an older gpuscope, or steps not from the torch plugin)";
  } else {
    s.untraced_unknown = "too few untraced steps";
  }
  if (s.untraced_step_ms > 0 && s.traced_step_ms > 0)
    s.tracing_cost_pct = 100 * (s.traced_step_ms / s.untraced_step_ms - 1);
}

std::string implausible_untraced(double untraced, double traced, double data_wait) {
  if (untraced > traced * (1 + kStepNoiseShare))
    return "slower than the traced step (" + format_fixed(untraced, 2) + " ms against " + format_fixed(traced, 2) +
           " ms), which tracing cannot make";
  // Tracing slows the main process, not the DataLoader's workers: a job that
  // waits for them in its traced steps cannot step faster than they deliver.
  if (data_wait > 0 && untraced < data_wait * (1 - kStepNoiseShare))
    return "faster than the DataLoader delivered batches in the traced steps (" + format_fixed(data_wait, 2) +
           " ms a step waiting for data), which tracing does not slow";
  return {};
}

void check_untraced(Analysis& a, const Context& c) {
  Summary& s = a.summary;
  if (s.untraced_step_ms <= 0 || s.traced_step_ms <= 0 || c.steps.empty()) return;
  const double untraced = s.untraced_step_ms, traced = s.traced_step_ms;
  int64_t waiting = 0;
  for (const auto& st : c.steps) waiting += c.dataloader.covered(st.start, st.end);
  const double data_wait = static_cast<double>(waiting) / 1e6 / static_cast<double>(c.steps.size());
  const std::string why = implausible_untraced(untraced, traced, data_wait);
  if (why.empty()) return;
  a.notes.push_back("the control stretch's untraced step, " + format_fixed(untraced, 2) + " ms, is " + why +
                    ": it ran outside the job's steady state (warm-up, compilation, a DataLoader filling its "
                    "queue), so the job is judged on the traced step");
  s.untraced_rejected_ms = untraced;
  s.untraced_step_ms = 0;
  s.tracing_cost_pct = 0;
  s.untraced_method.clear();
  s.untraced_unknown = "the control stretch's step (" + format_fixed(untraced, 2) + " ms) is " + why;
}

void measure_steps_by_kind(Analysis& a, const Context& c) {
  if (c.m.op_steps.empty() || c.steps.empty()) return;
  std::vector<double> kernels_only, ops;
  for (size_t i = 0; i < c.steps.size(); ++i)
    if (c.step_ops[i] > 0)
      (c.step_ops[i] == 1 ? kernels_only : ops).push_back(static_cast<double>(c.steps[i].duration()) / 1e6);
  Summary& s = a.summary;
  s.kernels_only_steps = static_cast<int64_t>(kernels_only.size());
  s.ops_steps = static_cast<int64_t>(ops.size());
  if (!kernels_only.empty()) s.kernels_only_step_ms = median(std::move(kernels_only));
  if (!ops.empty()) s.ops_step_ms = median(std::move(ops));
}

void measure_kernel_gap_floor(Analysis& a, const Context& c) {
  // A gap before a kernel whose launch call had returned before the GPU ran dry:
  // the CPU was ahead, so the gap is the GPU's own from one kernel to the next.
  std::vector<double> queued;
  int64_t gaps = 0, busy_until = INT64_MIN;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    if (busy_until != INT64_MIN && k.start > busy_until) {
      ++gaps;
      const uint32_t api = c.m.api_by_corr.find(k.corr);
      if (api != kNone && c.m.apis[api].end() <= busy_until)
        queued.push_back(static_cast<double>(k.start - busy_until));
    }
    busy_until = std::max(busy_until, k.end());
  }
  if (queued.size() < kMinQueuedGaps || c.n_steps <= 0) return;
  a.summary.kernel_gap_floor_ms = median(std::move(queued)) * static_cast<double>(gaps) / 1e6 / c.n_steps;
}

void judge_against_untraced(Analysis& a) {
  Summary& s = a.summary;
  const double traced = s.traced_step_ms;
  const double busy = s.gpu_utilization * traced;  // GPU busy ms per step, the same traced or not
  const double job = s.untraced_step_ms > 0 ? s.untraced_step_ms : traced;
  if (s.untraced_step_ms > 0) {
    const double traced_idle = traced - busy;
    const double job_idle = std::clamp(s.untraced_step_ms - busy, 0.0, std::max(traced_idle, 0.0));
    s.cpu_idle_factor = traced_idle > 0 ? job_idle / traced_idle : 1;
    // Launch overhead and per-op CPU time fill the many short gaps between
    // kernels; of the untraced idle, the floor back-to-back kernels leave
    // anyway is not theirs to save (CUDA graphs do not remove it).
    const double launch_idle = std::clamp(job_idle - s.kernel_gap_floor_ms, 0.0, job_idle);
    s.launch_idle_factor = traced_idle > 0 ? launch_idle / traced_idle : 1;
  }
  // A GPU-side saving shortens the step only while the GPU is on its critical
  // path; its busy share of the step is the first-order estimate of that.
  s.gpu_saving_factor = job > 0 ? std::clamp(busy / job, 0.0, 1.0) : 1;
  std::vector<Finding> kept;
  for (Finding& f : a.findings) {
    f.traced_saving_ms = f.saving_ms_per_step;
    const double factor = unscaled(f.id)             ? 1
                          : between_kernels(f.id)    ? s.launch_idle_factor
                          : cpu_side(f.id)           ? s.cpu_idle_factor
                                                     : s.gpu_saving_factor;
    f.saving_ms_per_step *= factor;
    f.saving_pct = job > 0 ? 100 * f.saving_ms_per_step / job : 0;
    if (f.id != "memory-pressure" && f.saving_pct < min_saving_pct(f.id)) continue;
    f.severity = severity_of(f.saving_pct, f.id);
    if (factor < 0.995)
      f.evidence.metrics.push_back({"traced_saving_ms", f.traced_saving_ms, "ms"});
    kept.push_back(std::move(f));
  }
  rank_findings(kept);
  a.findings = std::move(kept);
}

}  // namespace gpuscope::analyzer
