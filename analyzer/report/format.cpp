#include "analyzer/report/format.h"

#include <cmath>

#include "analyzer/whatif/history.h"

namespace gpuscope::analyzer::report {

std::string untraced_line(const Analysis& a) {
  const Summary& s = a.summary;
  if (s.untraced_step_ms <= 0)
    return "untraced step time unknown: " + s.untraced_unknown + "; savings are judged against the traced step of " +
           format_fixed(s.traced_step_ms, 3) + " ms, which includes gpuscope's cost";
  const double cost = s.tracing_cost_pct;
  std::string by_kind;
  if (s.kernels_only_steps > 0)
    by_kind = " (steps tracing kernels only " + plus_percent(100 * (s.kernels_only_step_ms / s.untraced_step_ms - 1)) +
              (s.ops_steps > 0 ? ", steps recording ops " + plus_percent(100 * (s.ops_step_ms / s.untraced_step_ms - 1)) : "") +
              ", medians)";
  return "untraced step " + format_fixed(s.untraced_step_ms, 3) + " ms (" +
         (s.untraced_method == "gpu_drained" ? "GPU time of the untraced steps" : "median of the untraced steps") +
         "), traced " + format_fixed(s.traced_step_ms, 3) + " ms: tracing cost " + plus_percent(cost) + by_kind +
         "; savings are judged against the untraced step";
}

std::string tracer_overhead_line(const Analysis& a) {
  const Summary& s = a.summary;
  if (s.tracer_overhead.empty()) return "";
  std::string kinds;
  for (const auto& o : s.tracer_overhead)
    kinds += (kinds.empty() ? "" : ", ") + o.name + " " + format_fixed(o.ms_per_step, 3) + " ms in " +
             std::to_string(o.count);
  return "tracer overhead recorded: " + format_fixed(s.tracer_overhead_ms_per_step, 3) + " ms a step (" + kinds + ")";
}

std::string cross_rank_scope_line(const Analysis& a) {
  const Summary& s = a.summary;
  std::string who = "process " + std::to_string(s.pid);
  for (const auto& r : a.ranks)
    if (r.analysed) who = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(s.pid) + ")";
  return std::to_string(a.ranks.size()) + " ranks; savings are a share of the step of " + who + ", " +
         (s.untraced_step_ms > 0 ? format_fixed(s.untraced_step_ms, 3) + " ms untraced (" + format_fixed(s.traced_step_ms, 3) + " ms traced)"
                                 : format_fixed(s.traced_step_ms, 3) + " ms traced (untraced step unknown)");
}

std::string scope_line(const Analysis& a) {
  const Summary& s = a.summary;
  std::string line = "process " + std::to_string(s.pid);
  for (const auto& r : a.ranks)
    if (r.analysed) line += " (rank " + std::to_string(r.rank) + " of " + std::to_string(a.ranks.size()) + ")";
  if (s.device >= 0) {
    line += ", device " + std::to_string(s.device);
    for (const auto& d : s.devices)
      if (d.id == s.device && !d.name.empty()) line += " (" + d.name + ")";
  } else {
    line += ", no GPU activity";
  }
  line += ", " + std::to_string(s.steps) + " steps";
  // Step numbers count from the job's start: a capture on demand (or a
  // --steps window) holds steps numbered past the count it recorded.
  if (s.steps > 0 && s.step_source != StepSource::kWholeRecording)
    line += " (" + std::to_string(s.first_step) + "-" + std::to_string(s.last_step) +
            (s.last_step < s.steps_recorded ? " of " + std::to_string(s.steps_recorded)
                                            : " of the job's; " + std::to_string(s.steps_recorded) + " recorded") +
            ")";
  line += s.step_source == StepSource::kWholeRecording ? ": " + s.step_source_detail : " from " + s.step_source_detail;
  if (s.warmup_skipped > 0) line += ", " + std::to_string(s.warmup_skipped) + " warm-up skipped";
  if (s.steps_untraced > 0)
    line += ", " + std::to_string(s.steps_untraced) + (s.control_stretch ? " untraced (control stretch)" : " untraced (sampled)");
  return line;
}

bool has_nccl_kernels(const std::vector<RankSummary>& ranks) {
  for (const auto& r : ranks)
    if (r.comm_overlap_pct >= 0) return true;
  return false;
}

Columns rank_columns(bool nccl) {
  using enum Column::Kind;
  Columns columns{{"rank", kNumber},          {"host"},
                  {"pid", kNumber},           {"device", kNumber},
                  {"steps", kNumber},         {"median ms", kNumber},
                  {"p95 ms", kNumber},        {"GPU util", kNumber},
                  {"collective ms", kNumber}, {"data ms", kNumber},
                  {"compute ms", kNumber}};
  if (nccl) columns.insert(columns.end(), {{"NCCL ms", kNumber}, {"NCCL overlapped by compute", kNumber}});
  return columns;
}

std::vector<std::string> rank_cells(const RankSummary& r, bool nccl) {
  std::vector<std::string> cells{std::to_string(r.rank),
                                 r.host,
                                 std::to_string(r.pid),
                                 r.device >= 0 ? std::to_string(r.device) : "-",
                                 std::to_string(r.steps),
                                 format_fixed(r.step_ms_median, 3),
                                 format_fixed(r.step_ms_p95, 3),
                                 r.gpu_utilization >= 0 ? format_percent(r.gpu_utilization) : "-",
                                 format_fixed(r.collective_ms_per_step, 3),
                                 format_fixed(r.data_ms_per_step, 3),
                                 format_fixed(r.compute_ms_per_step, 3)};
  if (nccl) {
    const bool measured = r.comm_overlap_pct >= 0;
    cells.push_back(measured ? format_fixed(r.communication_ms_per_step, 3) : "-");
    cells.push_back(measured ? format_fixed(r.comm_overlap_pct, 1) + " %" : "-");
  }
  return cells;
}

std::string whatif_check_line(const Analysis& a) {
  const WhatIf& w = a.whatif;
  if (!w.available) return w.unavailable.empty() ? std::string() : "what-if replay: none (" + w.unavailable + ")";
  std::string line = "what-if replay of " + std::to_string(w.steps) + " steps: " + format_fixed(w.replay_ms, 2) +
                     " ms a step against the job's " + format_fixed(w.job_step_ms, 2) + " ms (" +
                     plus_percent(w.identity_error_pct) + ")";
  if (w.tracing_cost_per_call_us > 0)
    line += ", tracing's " + format_fixed(w.tracing_cost_per_call_us, 2) + " us a CUDA call and " +
            format_fixed(w.tracing_cost_per_op_us, 2) + " us a torch op taken off";
  line += "; as traced " + format_fixed(w.replay_traced_ms, 2) + " ms against " + format_fixed(w.traced_step_ms, 2) +
          " ms; calibration " + w.calibration +
          (w.calibration_path.empty() ? "" : " (read from " + w.calibration_path + ")") +
          (w.calibration_measured ? "" : " (estimated from peak rates, not measured)");
  if (w.history.tries > 0)
    line += "; " + std::to_string(w.history.tries) + " tries of gpuscope try on this GPU in " + w.history.file;
  return line;
}

namespace {

// "; calibrated by 3 tries on this machine (NVIDIA H100 80GB HBM3): the replay alone 30.00 ms (-25.0 %, 28.00-32.00 ms)"
std::string tries_note(const std::optional<TriesCorrection>& t, const WhatIf& w) {
  if (!t) return "";
  const std::string tries = std::to_string(t->tries) + (t->tries == 1 ? " try" : " tries");
  if (!t->corrected)
    return "; " + tries + " on this machine (" + w.history.gpu + "), " + std::to_string(whatif::kMinTries) +
           " needed to calibrate";
  return "; calibrated by " + tries + " on this machine (" + w.history.gpu + "): the replay alone " +
         format_fixed(t->step_ms, 2) + " ms (" + (t->saving_pct >= 0 ? "-" : "+") +
         format_fixed(std::abs(t->saving_pct), 1) + " %, " + format_fixed(t->lo_ms, 2) + "-" + format_fixed(t->hi_ms, 2) +
         " ms)";
}

}  // namespace

std::vector<std::string> plan_lines(const Analysis& a) {
  std::vector<std::string> out;
  const WhatIf& w = a.whatif;
  if (!w.available) return out;
  auto title = [&](const std::string& id) {
    for (const auto& f : w.fixes)
      if (f.fix == id) return f.title;
    return id;
  };
  for (size_t i = 0; i < w.plan.size(); ++i) {
    const PlanStep& p = w.plan[i];
    std::string what = (i ? "then " : "") + title(p.fixes.back());
    out.push_back(std::to_string(i + 1) + ". " + what + " -> " + format_fixed(p.step_ms, 2) + " ms (" +
                  (p.saving_pct >= 0 ? "-" : "+") + format_fixed(std::abs(p.saving_pct), 1) + " %" +
                  (i ? " in all" : "") + ", " + format_fixed(p.lo_ms, 2) + "-" + format_fixed(p.hi_ms, 2) + " ms)" +
                  tries_note(p.by_tries, w));
  }
  if (w.plan.empty()) out.push_back("no fix the replay can price saves 2 % or more");
  for (const auto& q : w.asked) {
    std::string ids;
    for (const auto& id : q.asked) ids += (ids.empty() ? "" : "+") + id;
    std::string line = "asked: " + ids + " -> " + format_fixed(q.step_ms, 2) + " ms (" + (q.saving_pct >= 0 ? "-" : "+") +
                       format_fixed(std::abs(q.saving_pct), 1) + " %, " + format_fixed(q.lo_ms, 2) + "-" +
                       format_fixed(q.hi_ms, 2) + " ms)" + tries_note(q.by_tries, w);
    if (!q.skipped.empty()) {
      std::string sk;
      for (const auto& id : q.skipped) sk += (sk.empty() ? "" : ", ") + id;
      line += "; left out (does not apply to this job): " + sk;
    }
    out.push_back(line);
  }
  for (const auto& n : w.not_recommended) out.push_back("not recommended: " + n);
  return out;
}

std::string finding_prediction(const Finding& f) {
  if (f.predicted_step_ms <= 0) return {};
  return "predicted step " + format_fixed(f.predicted_step_ms, 2) + " ms (saving " + format_fixed(f.saving_lo_pct, 1) +
         " to " + format_fixed(f.saving_hi_pct, 1) + " %)";
}

}  // namespace gpuscope::analyzer::report
