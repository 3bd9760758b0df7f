// analyze(): load, find steps, build the context, then summary, hotspots,
// idle attribution, memory and the rules' findings.
#include "analyzer/analysis.h"
#include "analyzer/rule_docs.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>

#include "analyzer/context.h"
#include "analyzer/hotspots.h"
#include "analyzer/job_end.h"
#include "analyzer/model.h"
#include "analyzer/parallel.h"
#include "analyzer/ranks.h"
#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule.h"
#include "analyzer/rules/rule_util.h"
#include "analyzer/steps.h"
#include "analyzer/timing.h"
#include "analyzer/untraced.h"
#include "analyzer/whatif/advise.h"
#include "analyzer/whatif/fixes.h"
#include "trace_formats/common/error.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/live.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::analyzer {

const char* Breakdown::category(int i) {
  static const char* names[kCategories] = {"kernel", "memcpy", "memset", "communication",
                                           "runtime", "dataloader", "cpu_exec", "idle"};
  return i >= 0 && i < kCategories ? names[i] : "";
}

int64_t Breakdown::get(int i) const { return const_cast<Breakdown*>(this)->at(i); }

int64_t& Breakdown::at(int i) {
  switch (i) {
    case 0: return kernel;
    case 1: return memcpy;
    case 2: return memset;
    case 3: return communication;
    case 4: return runtime;
    case 5: return dataloader;
    case 6: return cpu_exec;
    default: return idle;
  }
}

int64_t Breakdown::total() const {
  int64_t t = 0;
  for (int i = 0; i < kCategories; ++i) t += get(i);
  return t;
}

const char* step_source_name(StepSource s) {
  switch (s) {
    case StepSource::kProfilerStep: return "profiler_step";
    case StepSource::kOptimizerStep: return "optimizer_step";
    case StepSource::kNvtxStepTable: return "nvtx_step_table";
    case StepSource::kGraphLaunch: return "graph_launch";
    case StepSource::kRanges: return "ranges";
    case StepSource::kLaunchSequence: return "launch_sequence";
    case StepSource::kWholeRecording: return "whole_recording";
  }
  return "whole_recording";
}

const char* idle_cause_name(IdleCause c) {
  switch (c) {
    case IdleCause::kDataLoader: return "dataloader";
    case IdleCause::kHostSync: return "host_sync";
    case IdleCause::kAllocator: return "allocator";
    case IdleCause::kCompile: return "compile";
    case IdleCause::kLaunch: return "launch_overhead";
    case IdleCause::kCpuCompute: return "cpu_compute";
    case IdleCause::kOther: return "other";
  }
  return "other";
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
  }
  return "low";
}

void parse_step_range(const std::string& text, Options& o) {
  auto bad = [&] { return Error("--steps: expected A-B, A-, -B or A with step numbers, got '" + text + "'"); };
  auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
      throw bad();
    return std::stoll(s);
  };
  size_t dash = text.find('-');
  if (dash == std::string::npos) {
    o.first_step = o.last_step = number(text);
    return;
  }
  std::string a = text.substr(0, dash), b = text.substr(dash + 1);
  if (a.empty() && b.empty()) throw bad();
  if (!a.empty()) o.first_step = number(a);
  if (!b.empty()) o.last_step = number(b);
  if (o.first_step && o.last_step && *o.first_step > *o.last_step) throw bad();
}

std::vector<std::string> parse_fix_list(const std::string& text) {
  std::vector<std::string> ids;
  size_t at = 0;
  while (at <= text.size()) {
    size_t plus = text.find('+', at);
    if (plus == std::string::npos) plus = text.size();
    const std::string id = text.substr(at, plus - at);
    if (!whatif::find_fix(id)) {
      std::string known;
      for (const auto& f : whatif::all_fixes()) known += (known.empty() ? "" : ", ") + std::string(f.id);
      throw Error("--what-if: unknown fix '" + id + "' in '" + text + "' (fixes: " + known + ")");
    }
    ids.push_back(id);
    at = plus + 1;
  }
  return ids;
}

namespace {

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

int64_t pid_of_rank(store::Reader& reader, int64_t rank) {
  std::string list;
  using P = store::rec::Process;
  store::Cursor<P> p(reader.db(), {P::kPid, P::kRank}, "WHERE rank IS NOT NULL ORDER BY rank, pid");
  std::optional<int64_t> pid;
  while (p.next()) {
    if (p->rank == rank && !pid) pid = p->pid;
    list += (list.empty() ? "" : ", ") + std::to_string(p->rank);
  }
  if (!pid)
    throw Error(reader.db().path() + ": no process with rank " + std::to_string(rank) +
                (list.empty() ? std::string(" (no process has a rank)") : " (ranks: " + list + ")"));
  return *pid;
}

// CUPTI's overhead records, the part of each inside the analysed steps, summed by kind.
void fill_tracer_overhead(Summary& s, const Context& c, const Model& m) {
  if (m.tracer_overhead.empty() || c.steps.empty()) return;
  std::map<std::string, Summary::TracerOverhead> by_name;
  int64_t total = 0;
  for (const auto& r : m.tracer_overhead) {
    const int64_t inside = c.step_set.covered(r.start, r.end);
    if (inside == 0 && !(r.start == r.end && c.step_set.contains(r.start))) continue;
    Summary::TracerOverhead& o = by_name[std::string(m.str(r.name))];
    o.ms_per_step += static_cast<double>(inside);
    ++o.count;
    total += inside;
  }
  const double steps = static_cast<double>(c.steps.size());
  for (auto& [name, o] : by_name) {
    o.name = name;
    o.ms_per_step /= 1e6 * steps;
    s.tracer_overhead.push_back(o);
  }
  std::stable_sort(s.tracer_overhead.begin(), s.tracer_overhead.end(),
                   [](const auto& a, const auto& b) { return a.ms_per_step > b.ms_per_step; });
  s.tracer_overhead_ms_per_step = static_cast<double>(total) / 1e6 / steps;
}

void fill_summary(Analysis& a, const Context& c, const Model& m, const StepPlan& plan) {
  Summary& s = a.summary;
  s.recording = m.file_name;
  s.pid = m.pid;
  s.processes = m.processes;
  s.device = c.device;
  s.cupti_status = m.cupti_status;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto span = [&](int64_t x, int64_t y) {
    lo = std::min(lo, x);
    hi = std::max(hi, y);
  };
  for (const auto& st : plan.all) span(st.start, st.end);
  for (const auto& r : m.ranges) span(r.start, r.end);
  if (!m.kernels.empty()) span(m.kernels.front().start, m.kernels.back().end());
  if (!m.apis.empty()) span(m.apis.front().start, m.apis.back().end());
  s.recording_ns = hi > lo ? hi - lo : 0;
  s.step_source = plan.source;
  s.step_source_detail = plan.detail;
  s.steps = static_cast<int64_t>(c.steps.size());
  s.steps_recorded = static_cast<int64_t>(plan.all.size());
  s.warmup_skipped = plan.warmup_skipped;
  s.steps_untraced = plan.untraced;
  s.control_stretch = plan.after_control && plan.warmup_skipped > 1;
  s.traced_step_ms_median = plan.traced_ms_median;
  s.untraced_step_ms_median = plan.untraced_ms_median;
  std::vector<double> ms;
  for (const auto& st : c.steps) ms.push_back(static_cast<double>(st.duration()) / 1e6);
  if (!c.steps.empty()) {
    s.first_step = c.steps.front().number;
    s.last_step = c.steps.back().number;
    s.wall_ns = c.steps.back().end - c.steps.front().start;
    if (plan.untraced > 0) {  // sampled: the traced steps' own time, not the untraced stretches between them
      s.wall_ns = 0;
      for (const auto& st : c.steps) s.wall_ns += st.duration();
    }
    double sum = 0;
    for (double x : ms) sum += x;
    s.step_ms_mean = sum / static_cast<double>(ms.size());
    s.step_ms_median = median(ms);
    s.step_ms_p95 = percentile(ms, 95);
    s.step_ms_min = *std::min_element(ms.begin(), ms.end());
    s.step_ms_max = *std::max_element(ms.begin(), ms.end());
  }
  int64_t busy = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    const Breakdown& b = c.step_breakdown[i];
    StepInfo info;
    info.number = c.steps[i].number;
    info.start_ns = c.steps[i].start;
    info.end_ns = c.steps[i].end;
    info.gpu_busy_ns = b.kernel + b.memcpy + b.memset + b.communication;
    info.outlier = ms.size() >= 3 && ms[i] > kOutlierFactor * s.step_ms_median;
    info.breakdown = b;
    if (info.outlier) s.outlier_steps.push_back(info.number);
    busy += info.gpu_busy_ns;
    a.steps.push_back(info);
  }
  s.gpu_utilization = c.step_ns > 0 ? static_cast<double>(busy) / static_cast<double>(c.step_ns) : 0;
  fill_tracer_overhead(s, c, m);

  // Every device the process used, with its own busy time inside the steps. The
  // analysed device's is known from the breakdown; others (rare) are computed here.
  std::map<int64_t, std::vector<Interval>> others;
  std::map<int64_t, int64_t> kernels;
  for (const auto& k : m.kernels)
    if (k.device != c.device && c.step_set.contains(k.start)) others[k.device].push_back({k.start, k.end()}), kernels[k.device]++;
  for (const auto& x : m.copies)
    if (x.device != c.device && c.step_set.contains(x.start)) others[x.device].push_back({x.start, x.end()});
  if (c.device >= 0) {
    others[c.device];
    kernels[c.device] = static_cast<int64_t>(c.kernels.size());
  }
  for (auto& [dev, iv] : others) {
    DeviceSummary d;
    d.id = dev;
    if (const DeviceInfo* info = m.device(dev)) {
      d.name = info->name;
      d.sm_count = info->sm_count;
      d.total_memory = info->total_memory;
    }
    if (dev == c.device) {
      d.busy_ns = busy;
    } else {
      IntervalSet set = IntervalSet::from(std::move(iv));
      for (const auto& st : c.steps) d.busy_ns += set.covered(st.start, st.end);
    }
    d.utilization = c.step_ns > 0 ? static_cast<double>(d.busy_ns) / static_cast<double>(c.step_ns) : 0;
    d.kernels = kernels[dev];
    s.devices.push_back(d);
  }

  const DeviceInfo* dev = m.device(c.device);
  const double sms = dev && dev->sm_count > 0 ? static_cast<double>(dev->sm_count) : 0;
  double weighted = 0, total = 0, tc = 0;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = m.kernels[i];
    total += k.dur;
    if (sms > 0) weighted += k.dur * std::min(1.0, static_cast<double>(k.blocks) / sms);
    if (c.kc(k.name).has(kTensorCore)) tc += k.dur;
  }
  s.sm_efficiency = total > 0 && sms > 0 ? weighted / total : 0;
  s.tensor_core_share = total > 0 ? tc / total : 0;
  s.kernels = static_cast<int64_t>(c.kernels.size());
  for (uint32_t i : c.copies) (m.copies[i].memset ? s.memsets : s.memcpys)++;
  s.api_calls = static_cast<int64_t>(c.apis.size());
  s.ops = static_cast<int64_t>(c.ops.size());
  a.breakdown = c.breakdown;
}

void fill_idle(Analysis& a, const Context& c) {
  IdleSummary& s = a.idle;
  for (int i = 0; i < kIdleCauses; ++i) {
    IdleCauseTotal t;
    t.cause = static_cast<IdleCause>(i);
    t.total_ns = c.idle_by_cause[static_cast<size_t>(i)];
    t.gaps = c.gaps_by_cause[static_cast<size_t>(i)];
    t.ms_per_step = c.ms_per_step(t.total_ns);
    t.pct_of_step = c.pct_of_step(t.total_ns);
    for (const Gap& g : c.largest[static_cast<size_t>(i)])
      t.largest.push_back({g.start, g.end, std::string("GPU idle (") + idle_cause_name(t.cause) + ")"});
    s.idle_ns += t.total_ns;
    s.gaps += t.gaps;
    s.causes.push_back(t);
  }
}

void fill_notes(Analysis& a, const Context& c, const Model& m, const StepPlan& plan, bool device_chosen) {
  auto& n = a.notes;
  if (a.summary.job && a.summary.job->unclean())
    n.push_back(std::string(a.summary.job->failed() ? "the job failed (" : "the job was stopped (") +
                a.summary.job->how() + ") after " + std::to_string(a.summary.job->steps) + " completed steps" +
                (a.summary.job->steps == 0 ? ": the findings describe its start-up only, not a training step" : ""));
  // A file still being written has its stretch open too: its job runs on.
  if (m.stretch_closed_by_reader && store::live_writer(m.path))
    n.push_back("the recording is still being written: its last traced stretch is open and taken to end at the last "
                "event written so far (--wait waits until the job ends)");
  else if (m.stretch_closed_by_reader)
    n.push_back("the job was killed inside a traced stretch, whose end was never written: it is taken to end at the "
                "last recorded event");
  if (!m.recording_stopped.empty())
    n.push_back("the collector stopped before the job ended (" + m.recording_stopped +
                "): the steps after that are not in the recording");
  if (m.processes > 1)
    n.push_back(std::to_string(m.processes) + " processes recorded; analysed pid " + std::to_string(m.pid) +
                " (the one with the most GPU work); pick another with --pid");
  if (plan.source == StepSource::kRanges)
    n.push_back("no step table (the torch plugin records optimizer steps): steps are the " +
                std::to_string(plan.all.size()) + " occurrences of the " + plan.detail);
  if (plan.source == StepSource::kLaunchSequence)
    n.push_back("no step table or repeating ranges: the steps are the " + std::to_string(plan.all.size()) +
                " repeats of the kernel launch sequence, each starting where the CPU paused longest; the torch "
                "plugin (`gpuscope setup torch`) records the job's own steps");
  if (plan.source == StepSource::kWholeRecording)
    n.push_back(
        "no steps found (no step table, no repeating NVTX or record_function range, no repeating kernel launch "
        "sequence): the whole recording is one step. A torch job gets its steps from the torch plugin "
        "(`gpuscope setup torch` builds it; `gpuscope doctor` says whether it loads), any job from an NVTX range "
        "around each step");
  if (a.summary.control_stretch)
    n.push_back(std::to_string(plan.untraced) + " of " + std::to_string(plan.all.size()) +
                " steps ran untraced (record's control stretch: the job's step time without gpuscope, in the first "
                "line); only traced steps are analysed, and a memory peak in the untraced ones is not seen");
  else if (plan.untraced > 0)
    n.push_back("sampled recording: " + std::to_string(plan.all.size() - static_cast<size_t>(plan.untraced)) + " of " +
                std::to_string(plan.all.size()) +
                " steps were traced whole (GPU activity, ops and allocator memory); only those are analysed, and their "
                "times include the tracing overhead; a memory peak between traced stretches is not seen");
  // What tracing cost the job is the first line's (untraced against traced,
  // on the GPU where the untraced stretch was drained); the CPU-side medians
  // of summary.sampling stay in the JSON only: where the CPU ran ahead of the
  // GPU in untraced steps they understate the job's step.
  if (a.summary.control_stretch)
    n.push_back("skipped the " + std::to_string(plan.warmup_skipped - 1) +
                " traced step(s) before the untraced control stretch (warm-up) and the first one after it (CUPTI resuming)");
  else if (plan.after_control)  // `record --steps A-`: untraced up to the window
    n.push_back("skipped the first traced step after the untraced ones (CUPTI starting to trace)");
  else if (plan.warmup_skipped > plan.resume_skipped)
    n.push_back("skipped " + std::to_string(plan.warmup_skipped - plan.resume_skipped) +
                " warm-up step(s): the first step and leading steps longer than 2x the median; choose steps with --steps A-B");
  if (plan.resume_skipped > 0)
    n.push_back("skipped the first step of " + std::to_string(plan.resume_skipped) +
                " traced stretch(es) after the first (CUPTI resuming after its teardown)");
  if (c.device < 0) {
    n.push_back("no GPU activity recorded: cupti_status=" + (m.cupti_status.empty() ? std::string("unknown") : m.cupti_status));
    return;
  }
  if (a.summary.devices.size() > 1 && !device_chosen)
    n.push_back("the process used " + std::to_string(a.summary.devices.size()) + " devices; analysed device " +
                std::to_string(c.device) + " (the busiest); pick another with --device");
  if (m.ops.empty()) n.push_back("no torch ops recorded (torch plugin not active): no top ops, no op names or shapes in the evidence");
  if (!m.op_steps.empty())
    n.push_back("torch ops recorded in steps " + m.op_steps + " (GPUSCOPE_TORCH_OP_STEPS; --full: every step); " +
                std::to_string(m.ops_placed_steps) + " other step(s) got theirs by position, times interpolated" +
                (m.ops_placed_steps_with_extra_calls
                     ? " (" + std::to_string(m.ops_placed_steps_with_extra_calls) +
                           " of them around GPU calls of their own, whose kernels have no op)"
                     : std::string()) +
                (m.ops_unplaced_steps ? "; " + std::to_string(m.ops_unplaced_steps) +
                                            " matched no recorded step and have kernels without ops"
                                      : std::string()));
  if (m.apis.empty()) n.push_back("no CUDA API calls recorded: launch overhead and host synchronizations cannot be attributed");
  if (c.dataloader.empty()) n.push_back("no DataLoader ranges recorded: waits for data count as other CPU time");
  if (!a.memory.torch_allocator && !a.memory.cuda_events) n.push_back("no memory events recorded: memory peaks unknown");
  if (a.memory.unreported_allocs > 0)
    n.push_back(std::to_string(a.memory.unreported_allocs) +
                " cudaMalloc-family call(s) in the analysed steps came where allocator events were not recorded (the "
                "first steps of each traced stretch only, GPUSCOPE_TORCH_MEMORY_STEPS): memory grew after those steps, "
                "so the job's peaks may be above the ones shown; GPUSCOPE_TORCH_MEMORY_STEPS=0 or --full records them "
                "in every step");
  if (c.device >= 0 && !m.device(c.device)) n.push_back("no properties recorded for device " + std::to_string(c.device) + ": SM efficiency and memory capacity unknown");
}

}  // namespace

void load_process(store::Reader& reader, const Options& opt, LoadedProcess& out) {
  LoadOptions lo;
  lo.pid = opt.pid;
  lo.device = opt.device;
  lo.progress = opt.progress;
  out.m = load_header(reader, lo);
  Model& m = out.m;
  out.plan = plan_steps(m, opt);
  StepPlan& plan = out.plan;
  // INT64_MIN would bind as NULL (store::kNull).
  int64_t wlo = INT64_MIN + 1, whi = INT64_MAX;
  if (!plan.analysed.empty()) {
    wlo = INT64_MAX;
    whi = INT64_MIN;
    for (const auto& s : plan.analysed) wlo = std::min(wlo, s.start), whi = std::max(whi, s.end);
  }
  // The GPU work of the last steps can end long after the CPU left them:
  // load to the end, then cut what lies beyond the steps' GPU-side end.
  const bool cpu_steps = !plan.analysed.empty();
  if (cpu_steps) whi = INT64_MAX;
  load_events(reader, m, wlo, whi, opt.progress);
  if (cpu_steps) {
    extend_steps_to_gpu(plan, m);
    int64_t end = INT64_MIN;
    for (const auto& s : plan.analysed) end = std::max(end, s.end);
    trim_events_after(m, end);
  }
  if (!cpu_steps && from_launch_sequence(m, plan)) {
    // Selected like steps from ranges; what lies outside them goes. A sampled
    // recording whose traced stretches hold no whole step is analysed whole,
    // as before steps came from launches, unless --steps asked for some.
    try {
      select_steps(plan, m, opt);
    } catch (const Error&) {
      if (opt.first_step || opt.last_step) throw;
      plan = StepPlan{};
    }
  }
  if (!cpu_steps && !plan.analysed.empty()) {
    extend_steps_to_gpu(plan, m);
    int64_t begin = INT64_MAX, end = INT64_MIN;
    for (const auto& s : plan.analysed) begin = std::min(begin, s.start), end = std::max(end, s.end);
    trim_events_after(m, end);
    trim_events_before(m, begin);
  } else if (!cpu_steps && (opt.first_step || opt.last_step)) {
    throw Error(m.path + ": --steps given, but the recording has no steps (no step table, no repeating ranges, no "
                "repeating kernel launch sequence)");
  }
  if (plan.analysed.empty()) plan_whole_recording(plan, m);
  if (plan.analysed.empty())
    throw Error(m.path + ": " + unclean_job_prefix(m.job) + "process " + std::to_string(m.pid) +
                " has no timed events to analyse");

  std::map<int64_t, int64_t> busy;
  for (const auto& k : m.kernels) busy[k.device] += k.dur;
  for (const auto& x : m.copies) busy[x.device] += x.dur;
  int64_t device = -1;
  if (opt.device) {
    if (!busy.count(*opt.device)) {
      std::vector<int64_t> ids;
      for (auto& [d, t] : busy) ids.push_back(d);
      throw Error(m.path + ": device " + std::to_string(*opt.device) + " has no GPU activity in the analysed steps" +
                  (ids.empty() ? std::string(" (no device has any)") : " (devices with activity: " + join(ids) + ")"));
    }
    device = *opt.device;
  } else {
    int64_t best = -1;
    for (auto& [d, t] : busy)
      if (t > best) best = t, device = d;
  }
  out.device = device;
}

Analysis analyze(store::Reader& reader, const Options& options) {
  PhaseTimer timer;
  Options opt = options;
  if (opt.rank) opt.pid = pid_of_rank(reader, *opt.rank);
  LoadedProcess loaded;
  load_process(reader, opt, loaded);
  Model& m = loaded.m;
  StepPlan& plan = loaded.plan;
  const int64_t device = loaded.device;
  timer.mark("load, steps and events");

  Context c = build_context(m, plan, device, [&] { link_model(m); });
  timer.mark("link, breakdown, idle");
  Analysis a;
  fill_summary(a, c, m, plan);
  a.summary.job = m.job;
  measure_untraced(a, plan, m.imported);
  check_untraced(a, c);
  measure_steps_by_kind(a, c);
  measure_kernel_gap_floor(a, c);
  fill_idle(a, c);
  a.memory = memory_summary(c);
  fill_notes(a, c, m, plan, opt.device.has_value());
  timer.mark("summary and memory");

  // Hotspots and rules only read the context and the summary: run them side by side.
  const auto top = static_cast<size_t>(std::max(1, opt.top));
  const auto rules = all_rules();
  std::vector<std::optional<Finding>> found(rules.size());
  const RuleInput in{c, a};
  std::vector<std::function<void()>> tasks = {
      [&] {
        a.top_kernels = top_kernels(c, top);
        a.copies = copy_stats(c);
        a.api_calls = api_stats(c, top);
      },
      [&] { a.top_ops = top_ops(c, top); },
  };
  if (device >= 0)
    for (size_t i = 0; i < rules.size(); ++i) tasks.push_back([&, i] { found[i] = rules[i]->evaluate(in); });
  run_tasks(tasks);
  timer.mark("hotspots and rules");
  for (auto& f : found)
    if (f) a.findings.push_back(std::move(*f));
  analyze_ranks(reader, opt, c, a);
  timer.mark("ranks");
  judge_against_untraced(a);
  c.calibrations = &opt.calibrations;
  if (opt.replay) {
    whatif::advise(c, a, opt.what_if);
    const DeviceInfo* dev = m.device(c.device);
    const std::string gpu = dev ? dev->name : std::string();
    a.whatif.calibration_path = whatif::calibration_for(gpu, &opt.calibrations).path;
    whatif::correct_by_tries(a, opt.try_history, gpu);
  }
  timer.mark("what-if replay");
  cap_startup_findings(a);

  return a;
}

std::vector<RuleDoc> rule_docs() {
  std::vector<RuleDoc> out;
  for (const Rule* r : all_rules()) {
    RuleDoc d{std::string(r->id), std::string(r->title), std::string(r->detects), std::string(r->saving_model), {}};
    for (const auto& t : r->thresholds)
      d.thresholds.push_back({std::string(t.name), t.value, std::string(t.unit), std::string(t.meaning)});
    out.push_back(std::move(d));
  }
  for (const CrossRankRule* r : cross_rank_rules()) {
    RuleDoc d{std::string(r->id), std::string(r->title), std::string(r->detects), std::string(r->saving_model), {}};
    for (const auto& t : r->thresholds)
      d.thresholds.push_back({std::string(t.name), t.value, std::string(t.unit), std::string(t.meaning)});
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpuscope::analyzer
