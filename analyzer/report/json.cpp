// The JSON report, schema "gpuscope-report/1" (docs/report-json.md). Keys
// keep their order; times are ms (3 decimals) unless a key ends in _ns.
#include <nlohmann/json.hpp>

#include <cmath>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/whatif/history.h"
#include "analyzer/job_end.h"
#include "analyzer/report/format.h"
#include "report/json.h"

namespace gpuscope::analyzer {
namespace {

using json = nlohmann::ordered_json;

double ms(int64_t ns) { return round_to(static_cast<double>(ns) / 1e6, 3); }
double ms3(double v) { return round_to(v, 3); }

json breakdown_json(const Breakdown& b, double divide) {
  json j = json::object();
  for (int i = 0; i < Breakdown::kCategories; ++i)
    j[Breakdown::category(i)] = round_to(static_cast<double>(b.get(i)) / 1e6 / divide, 3);
  return j;
}

json range_json(const TimeRange& r) {
  return json{{"start_ns", r.start_ns}, {"end_ns", r.end_ns}, {"label", r.label}};
}

json summary_json(const Summary& s) {
  json devices = json::array();
  for (const auto& d : s.devices)
    devices.push_back({{"id", d.id}, {"name", d.name}, {"sm_count", d.sm_count}, {"total_memory", d.total_memory},
                       {"busy_ms", ms(d.busy_ns)}, {"utilization", round_to(d.utilization, 4)}, {"kernels", d.kernels}});
  json out = json::object();
  if (s.job) {  // how the recorded job ended (analyzer/job_end.h), first
    const store::JobEnd& j = *s.job;
    out["job_exit"] = {{"failed", j.failed()},
                       {"stopped", j.stopped()},
                       {"exit_code", j.exit_code ? json(*j.exit_code) : json(nullptr)},
                       {"signal", j.signal.empty() ? json(nullptr) : json(j.signal)},
                       {"wall_ms", std::round(static_cast<double>(j.wall_ns) / 1e3) / 1e3},
                       {"steps", j.steps},
                       {"startup_only", startup_only(s)}};
  }
  out.update(json{
      {"pid", s.pid},
      {"processes", s.processes},
      {"device", s.device},
      {"cupti_status", s.cupti_status},
      {"recording_ms", ms(s.recording_ns)},
      {"wall_ms", ms(s.wall_ns)},
      {"step_source", step_source_name(s.step_source)},
      {"step_source_detail", s.step_source_detail},
      {"steps", s.steps},
      {"steps_recorded", s.steps_recorded},
      {"warmup_skipped", s.warmup_skipped},
      {"steps_untraced", s.steps_untraced},
      {"first_step", s.first_step},
      {"last_step", s.last_step},
      {"step_ms_mean", ms3(s.step_ms_mean)},
      {"step_ms_median", ms3(s.step_ms_median)},
      {"step_ms_p95", ms3(s.step_ms_p95)},
      {"step_ms_min", ms3(s.step_ms_min)},
      {"step_ms_max", ms3(s.step_ms_max)},
      {"outlier_steps", s.outlier_steps},
      {"gpu_utilization", round_to(s.gpu_utilization, 4)},
      {"sm_efficiency", round_to(s.sm_efficiency, 4)},
      {"tensor_core_share", round_to(s.tensor_core_share, 4)},
      {"devices", devices},
      {"counts", {{"kernels", s.kernels}, {"memcpys", s.memcpys}, {"memsets", s.memsets}, {"api_calls", s.api_calls}, {"ops", s.ops}}},
  });
  // Sampled recordings only, so reports of full recordings keep their shape.
  if (s.untraced_step_ms_median > 0)
    out["sampling"] = {{"traced_step_ms_median", ms3(s.traced_step_ms_median)},
                       {"untraced_step_ms_median", ms3(s.untraced_step_ms_median)},
                       {"tracing_cost_pct", round_to(100 * (s.traced_step_ms_median / s.untraced_step_ms_median - 1), 2)}};
  out["untraced"] = {{"step_ms", s.untraced_step_ms > 0 ? json(ms3(s.untraced_step_ms)) : json(nullptr)},
                     {"method", s.untraced_method.empty() ? json(nullptr) : json(s.untraced_method)},
                     {"unknown_why", s.untraced_unknown.empty() ? json(nullptr) : json(s.untraced_unknown)},
                     {"traced_step_ms", ms3(s.traced_step_ms)},
                     {"tracing_cost_pct", s.untraced_step_ms > 0 ? json(round_to(s.tracing_cost_pct, 2)) : json(nullptr)},
                     {"kernels_only_step_ms", s.kernels_only_steps > 0 ? json(ms3(s.kernels_only_step_ms)) : json(nullptr)},
                     {"kernels_only_steps", s.kernels_only_steps},
                     {"ops_step_ms", s.ops_steps > 0 ? json(ms3(s.ops_step_ms)) : json(nullptr)},
                     {"ops_steps", s.ops_steps},
                     {"cpu_idle_factor", round_to(s.cpu_idle_factor, 4)},
                     {"gpu_saving_factor", round_to(s.gpu_saving_factor, 4)},
                     {"launch_idle_factor", round_to(s.launch_idle_factor, 4)},
                     {"kernel_gap_floor_ms", ms3(s.kernel_gap_floor_ms)}};
  // A control stretch judged implausible only, so other reports keep their shape.
  if (s.untraced_rejected_ms > 0) out["untraced"]["rejected_step_ms"] = ms3(s.untraced_rejected_ms);
  // Recordings made with `--trace ...,overhead` only, so other reports keep their shape.
  if (!s.tracer_overhead.empty()) {
    json kinds = json::array();
    for (const auto& o : s.tracer_overhead)
      kinds.push_back({{"name", o.name}, {"ms_per_step", ms3(o.ms_per_step)}, {"count", o.count}});
    out["tracer_overhead"] = {{"ms_per_step", ms3(s.tracer_overhead_ms_per_step)}, {"kinds", kinds}};
  }
  return out;
}

json finding_json(const Finding& f) {
  json metrics = json::array(), top = json::array(), ranges = json::array();
  for (const auto& m : f.evidence.metrics)
    metrics.push_back({{"name", m.name}, {"value", round_to(m.value, 3)}, {"unit", m.unit}});
  for (const auto& c : f.evidence.top)
    top.push_back({{"name", c.name}, {"total_ms", ms3(c.total_ms)}, {"count", c.count}, {"detail", c.detail}});
  for (const auto& r : f.evidence.ranges) ranges.push_back(range_json(r));
  return json{
      {"id", f.id},
      {"title", f.title},
      {"severity", severity_name(f.severity)},
      {"saving_ms_per_step", ms3(f.saving_ms_per_step)},
      {"saving_pct", round_to(f.saving_pct, 2)},
      {"traced_saving_ms", ms3(f.traced_saving_ms)},
      {"fix_id", f.fix_id.empty() ? json(nullptr) : json(f.fix_id)},
      {"predicted_step_ms", f.predicted_step_ms > 0 ? json(ms3(f.predicted_step_ms)) : json(nullptr)},
      {"saving_range_pct", f.predicted_step_ms > 0 ? json::array({round_to(f.saving_lo_pct, 2), round_to(f.saving_hi_pct, 2)})
                                                   : json(nullptr)},
      {"evidence", {{"summary", f.evidence.summary}, {"metrics", metrics}, {"top", top}, {"ranges", ranges}}},
      {"fix", {{"text", f.fix.text}, {"code", f.fix.code}}},
  };
}

// Only where `gpuscope try`'s history held tries of these fixes on this GPU.
void add_tries(json& x, const std::optional<TriesCorrection>& t) {
  if (!t) return;
  x["tries"] = {{"count", t->tries},
                {"corrected", t->corrected},
                {"median_residual_pct", round_to(t->median_residual_pct, 2)},
                {"uncorrected_step_ms", ms3(t->step_ms)},
                {"uncorrected_step_range_ms", json::array({ms3(t->lo_ms), ms3(t->hi_ms)})},
                {"uncorrected_saving_pct", round_to(t->saving_pct, 2)}};
}

json whatif_json(const WhatIf& w) {
  if (!w.available) return json{{"available", false}, {"why", w.unavailable}};
  json fixes = json::array(), plan = json::array();
  for (const auto& f : w.fixes) {
    json x{{"fix", f.fix}, {"title", f.title}, {"applies", f.applies}};
    if (f.applies) {
      x["step_ms"] = ms3(f.step_ms);
      x["step_range_ms"] = json::array({ms3(f.lo_ms), ms3(f.hi_ms)});
      x["saving_pct"] = round_to(f.saving_pct, 2);
      x["cpu_ms"] = ms3(f.cpu_ms);
      x["gpu_ms"] = ms3(f.gpu_ms);
      add_tries(x, f.by_tries);
    } else {
      x["why_not"] = f.why_not;
    }
    fixes.push_back(x);
  }
  for (const auto& p : w.plan) {
    json x{{"fixes", p.fixes},
           {"step_ms", ms3(p.step_ms)},
           {"step_range_ms", json::array({ms3(p.lo_ms), ms3(p.hi_ms)})},
           {"saving_pct", round_to(p.saving_pct, 2)}};
    add_tries(x, p.by_tries);
    plan.push_back(std::move(x));
  }
  json asked = json::array();
  for (const auto& q : w.asked) {
    json x{{"asked", q.asked},
           {"fixes", q.fixes},
           {"skipped", q.skipped},
           {"step_ms", ms3(q.step_ms)},
           {"step_range_ms", json::array({ms3(q.lo_ms), ms3(q.hi_ms)})},
           {"saving_pct", round_to(q.saving_pct, 2)}};
    add_tries(x, q.by_tries);
    asked.push_back(std::move(x));
  }
  json kinds = json::object();
  for (const auto& [kind, ms] : w.gpu_ms_by_kind) kinds[kind] = ms3(ms);
  json out{{"available", true},
              {"asked", asked},
              {"gpu_ms_by_kind", kinds},
              {"calibration", w.calibration},
              {"calibration_measured", w.calibration_measured},
              {"steps", w.steps},
              {"job_step_ms", ms3(w.job_step_ms)},
              {"traced_step_ms", ms3(w.traced_step_ms)},
              {"replay_traced_ms", ms3(w.replay_traced_ms)},
              {"replay_ms", ms3(w.replay_ms)},
              {"cpu_ms", ms3(w.cpu_ms)},
              {"gpu_ms", ms3(w.gpu_ms)},
              {"queue_full_launches", w.queue_full_launches},
              {"identity_error_pct", round_to(w.identity_error_pct, 2)},
              {"tracing_cost_per_call_us", round_to(w.tracing_cost_per_call_us, 3)},
              {"tracing_cost_per_op_us", round_to(w.tracing_cost_per_op_us, 3)},
              {"cpu_pace_target_ms", w.cpu_pace_target_ms > 0 ? json(ms3(w.cpu_pace_target_ms)) : json(nullptr)},
              {"fixes", fixes},
              {"plan", plan},
              {"not_recommended", w.not_recommended}};
  if (!w.measure_first.empty()) {  // only then, so other reports keep their shape
    json m = json::array();
    for (const auto& p : w.measure_first)
      m.push_back({{"fixes", p.fixes},
                   {"step_ms", ms3(p.step_ms)},
                   {"step_range_ms", json::array({ms3(p.lo_ms), ms3(p.hi_ms)})},
                   {"saving_pct", round_to(p.saving_pct, 2)}});
    out["measure_first"] = std::move(m);
  }
  if (!w.calibration_path.empty()) out["calibration_file"] = w.calibration_path;
  if (w.history.tries > 0)
    out["history"] = {{"file", w.history.file},
                      {"gpu", w.history.gpu},
                      {"tries", w.history.tries},
                      {"damaged_lines", w.history.damaged_lines},
                      {"min_tries", whatif::kMinTries}};
  return out;
}

json ranks_json(const std::vector<RankSummary>& ranks) {
  json out = json::array();
  for (const auto& r : ranks)
    out.push_back({{"rank", r.rank},
                   {"host", r.host},
                   {"pid", r.pid},
                   {"device", r.device >= 0 ? json(r.device) : json(nullptr)},
                   {"steps", r.steps},
                   {"step_ms_median", ms3(r.step_ms_median)},
                   {"step_ms_p95", ms3(r.step_ms_p95)},
                   {"gpu_utilization", r.gpu_utilization >= 0 ? json(round_to(r.gpu_utilization, 4)) : json(nullptr)},
                   {"collective_ms_per_step", ms3(r.collective_ms_per_step)},
                   {"data_ms_per_step", ms3(r.data_ms_per_step)},
                   {"compute_ms_per_step", ms3(r.compute_ms_per_step)},
                   {"other_ms_per_step", ms3(r.other_ms_per_step)},
                   {"own_ms_median", ms3(r.own_ms_median)},
                   {"collective_ms_median", ms3(r.collective_ms_median)},
                   {"communication_ms_per_step", r.comm_overlap_pct >= 0 ? json(ms3(r.communication_ms_per_step)) : json(nullptr)},
                   {"comm_overlap_pct", r.comm_overlap_pct >= 0 ? json(round_to(r.comm_overlap_pct, 2)) : json(nullptr)},
                   {"analysed", r.analysed}});
  return out;
}

}  // namespace

std::string to_cross_rank_json(const Analysis& a) {
  const Summary& s = a.summary;
  json j;
  j["schema"] = kCrossRankReportSchema;
  j["recording"] = s.recording;
  j["step"] = {{"pid", s.pid},
               {"traced_step_ms", ms3(s.traced_step_ms)},
               {"untraced_step_ms", s.untraced_step_ms > 0 ? json(ms3(s.untraced_step_ms)) : json(nullptr)}};
  j["ranks"] = ranks_json(a.ranks);
  json findings = json::array();
  for (const auto& f : a.findings) findings.push_back(finding_json(f));
  j["findings"] = findings;
  j["notes"] = a.notes;
  return gpuscope::report::json_text(j);
}

std::string to_json(const Analysis& a) {
  const double n = std::max<double>(1, static_cast<double>(a.summary.steps));
  json j;
  j["schema"] = kReportSchema;
  j["recording"] = a.summary.recording;
  j["summary"] = summary_json(a.summary);
  j["breakdown"] = breakdown_json(a.breakdown, n);
  j["breakdown_total_ms"] = breakdown_json(a.breakdown, 1);

  json steps = json::array();
  for (const auto& s : a.steps)
    steps.push_back({{"number", s.number}, {"start_ns", s.start_ns}, {"end_ns", s.end_ns}, {"ms", ms(s.end_ns - s.start_ns)},
                     {"gpu_busy_ms", ms(s.gpu_busy_ns)}, {"outlier", s.outlier}, {"breakdown", breakdown_json(s.breakdown, 1)}});
  j["steps"] = steps;

  json kernels = json::array();
  for (const auto& k : a.top_kernels)
    kernels.push_back({{"name", k.name}, {"origin", k.origin}, {"tensor_core", k.tensor_core}, {"count", k.count},
                       {"total_ms", ms(k.total_ns)}, {"mean_us", round_to(k.mean_ns / 1e3, 3)},
                       {"min_us", round_to(static_cast<double>(k.min_ns) / 1e3, 3)},
                       {"max_us", round_to(static_cast<double>(k.max_ns) / 1e3, 3)}, {"share", round_to(k.share, 4)},
                       {"grid", k.grid}, {"block", k.block}});
  j["top_kernels"] = kernels;

  json ops = json::array();
  for (const auto& o : a.top_ops)
    ops.push_back({{"name", o.name}, {"count", o.count}, {"self_cpu_ms", ms(o.self_cpu_ns)}, {"cpu_ms", ms(o.cpu_ns)},
                   {"gpu_ms", ms(o.gpu_ns)}, {"kernels", o.kernels}, {"shapes", o.shapes}, {"dtypes", o.dtypes}});
  j["top_ops"] = ops;

  json copies = json::array();
  for (const auto& c : a.copies)
    copies.push_back({{"kind", c.kind}, {"direction", c.direction}, {"src_kind", c.src_kind}, {"dst_kind", c.dst_kind},
                      {"count", c.count}, {"bytes", c.bytes}, {"total_ms", ms(c.total_ns)}, {"gb_per_s", round_to(c.gb_per_s, 2)}});
  j["copies"] = copies;

  json apis = json::array();
  for (const auto& c : a.api_calls)
    apis.push_back({{"name", c.name}, {"count", c.count}, {"total_ms", ms(c.total_ns)}, {"mean_us", round_to(c.mean_ns / 1e3, 3)},
                    {"max_us", round_to(static_cast<double>(c.max_ns) / 1e3, 3)}, {"failed", c.failed}});
  j["api_calls"] = apis;

  json causes = json::array();
  for (const auto& c : a.idle.causes) {
    json largest = json::array();
    for (const auto& r : c.largest) largest.push_back(range_json(r));
    causes.push_back({{"cause", idle_cause_name(c.cause)}, {"total_ms", ms(c.total_ns)}, {"ms_per_step", ms3(c.ms_per_step)},
                      {"pct_of_step", round_to(c.pct_of_step, 2)}, {"gaps", c.gaps}, {"largest", largest}});
  }
  j["idle"] = {{"idle_ms", ms(a.idle.idle_ns)}, {"gaps", a.idle.gaps}, {"causes", causes}};

  const MemorySummary& m = a.memory;
  json timeline = json::array();
  for (const auto& p : m.timeline) timeline.push_back({p.ts_ns, p.allocated, p.reserved, p.device_used});
  j["memory"] = {{"torch_allocator", m.torch_allocator}, {"cuda_events", m.cuda_events}, {"capacity", m.capacity},
                 {"peak_allocated", m.peak_allocated}, {"peak_reserved", m.peak_reserved},
                 {"peak_device_used", m.peak_device_used}, {"peak_fraction", round_to(m.peak_fraction, 4)},
                 {"cuda_allocs", m.cuda_allocs}, {"cuda_frees", m.cuda_frees}, {"failed_allocs", m.failed_allocs},
                 {"allocs_per_step", round_to(m.allocs_per_step, 3)},
                 {"timeline_columns", {"ts_ns", "allocated", "reserved", "device_used"}}, {"timeline", timeline}};

  // Distributed jobs only, so reports of one process keep their shape.
  if (!a.ranks.empty()) j["ranks"] = ranks_json(a.ranks);

  json findings = json::array();
  for (const auto& f : a.findings) findings.push_back(finding_json(f));
  j["findings"] = findings;
  j["whatif"] = whatif_json(a.whatif);
  j["plan"] = j["whatif"].value("plan", json::array());
  json tried = json::array();
  for (const auto& t : a.tried) {
    const auto opt = [](const std::optional<double>& v) { return v ? json(round_to(*v, 2)) : json(nullptr); };
    tried.push_back({{"variant", t.variant},
                     {"fixes", t.fixes},
                     {"state", t.state},
                     {"why", t.why.empty() ? json(nullptr) : json(t.why)},
                     {"measured_saving_pct", t.measured ? json(round_to(t.measured_saving_pct, 2)) : json(nullptr)},
                     {"measured_range_pct", t.measured ? json::array({round_to(t.measured_low_pct, 2),
                                                                      round_to(t.measured_high_pct, 2)})
                                                       : json(nullptr)},
                     {"significant", t.measured ? json(t.significant) : json(nullptr)},
                     {"predicted_saving_pct", opt(t.predicted_saving_pct)},
                     {"predicted_range_pct", t.predicted_saving_pct ? json::array({round_to(*t.predicted_low_pct, 2),
                                                                                   round_to(*t.predicted_high_pct, 2)})
                                                                    : json(nullptr)},
                     {"within_range", t.within_range ? json(*t.within_range) : json(nullptr)}});
  }
  if (!a.tried.empty()) j["tried"] = tried;  // only with `gpuscope try --attach`, so other reports keep their shape
  j["notes"] = a.notes;
  return gpuscope::report::json_text(j);
}

}  // namespace gpuscope::analyzer
