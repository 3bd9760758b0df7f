// Findings about the job as it runs without gpuscope. Tracing slows the CPU
// side of a step (API records, op callbacks), so idle GPU time seen in traced
// steps is partly the tracer's. Given the untraced step time, every rule's
// estimate is carried over to the untraced job (docs/rules.md, "The untraced
// job"), findings that no longer reach their rule's threshold are dropped, and
// the rest are ranked again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/result.h"
#include "analyzer/context.h"
#include "analyzer/steps.h"

namespace gpuscope::analyzer {

// Fills summary.untraced_* and traced_step_ms from the plan and the analysed steps.
void measure_untraced(Analysis& a, const StepPlan& plan, bool imported);

// Checks the untraced step against the traced one (docs/rules.md, "The
// untraced job"): tracing only slows a job, and only its main process, not
// its DataLoader's workers. A control stretch that gives an untraced step
// outside that (it fell into warm-up: compilation, autotuning, a DataLoader
// filling or draining its queue) is not used: untraced_step_ms becomes 0 and
// untraced_unknown says why, so the job is judged on the traced step.
void check_untraced(Analysis& a, const Context& c);
// Why an untraced step of `untraced` ms cannot be the job's, given the traced
// step and the time a traced step waited for the DataLoader; "" when it can.
std::string implausible_untraced(double untraced, double traced, double data_wait);

// Fills summary.kernels_only_step_ms and ops_step_ms: where ops were recorded
// in some steps only, what tracing costs each kind of step.
void measure_steps_by_kind(Analysis& a, const Context& c);

// Fills summary.kernel_gap_floor_ms: the idle time per step the GPU has even
// when every kernel is queued before the one ahead of it ends (the gap between
// back-to-back kernels), which no CPU-side fix removes.
void measure_kernel_gap_floor(Analysis& a, const Context& c);

// Corrects, filters and ranks a.findings (the rules' raw output).
void judge_against_untraced(Analysis& a);

// A rule's kMinSavingPct threshold (0 when it has none), and the severity of
// a finding saving `pct` % of the step.
double min_saving_pct(std::string_view rule_id);
// Ranks findings by saving per step, largest first (ties by id).
void rank_findings(std::vector<Finding>& findings);
Severity severity_of(double pct, std::string_view rule_id);

}  // namespace gpuscope::analyzer
