// What analyze() finds, as plain value types: the summary, the step-time
// breakdown, hotspots, idle attribution, memory, findings, the what-if replay
// and its plan. The CLI, the viewer and `gpuscope diff` read these; the
// serializers are in analyzer/report/report.h. Times are ns since
// meta.origin_ns unless a name says ms.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_formats/store/job_end.h"

namespace gpuscope::analyzer {

// The JSON report's version (docs/report-json.md); bump when a field changes meaning.
inline constexpr const char* kReportSchema = "gpuscope-report/1";
// `gpuscope cluster`'s JSON report: analyze's `ranks` and findings objects.
inline constexpr const char* kCrossRankReportSchema = "gpuscope-cluster/1";

struct TimeRange {
  int64_t start_ns = 0, end_ns = 0;
  std::string label;
};

// Where each moment of a step went, counted once by priority (first wins):
// kernel > memcpy > memset > communication > runtime > dataloader > cpu_exec > idle.
struct Breakdown {
  int64_t kernel = 0, memcpy = 0, memset = 0, communication = 0, runtime = 0, dataloader = 0,
          cpu_exec = 0, idle = 0;
  static constexpr int kCategories = 8;
  static const char* category(int i);  // "kernel", ..., "idle"
  int64_t get(int i) const;
  int64_t& at(int i);
  int64_t total() const;
};

enum class StepSource {
  kProfilerStep,
  kOptimizerStep,
  kNvtxStepTable,
  kGraphLaunch,  // the collector's: each replay of the step's CUDA graph
  kRanges,
  kLaunchSequence,
  kWholeRecording,
};
const char* step_source_name(StepSource s);  // "profiler_step", ..., "whole_recording"

struct StepInfo {
  int64_t number = 0, start_ns = 0, end_ns = 0;
  int64_t gpu_busy_ns = 0;
  bool outlier = false;
  Breakdown breakdown;
};

struct DeviceSummary {
  int64_t id = 0;
  std::string name;
  int64_t sm_count = 0, total_memory = 0;
  int64_t busy_ns = 0;       // GPU activity inside the analysed steps
  double utilization = 0;    // busy / step time
  int64_t kernels = 0;
};

struct Summary {
  std::string recording;  // file name, without folders
  int64_t pid = 0;
  int64_t processes = 0;  // recorded processes (others: --pid)
  int64_t device = -1;    // analysed device, -1 when there is no GPU activity
  std::string cupti_status;
  int64_t recording_ns = 0;  // first to last event of the process
  int64_t wall_ns = 0;       // first analysed step start to last analysed step end
  StepSource step_source = StepSource::kWholeRecording;
  std::string step_source_detail;  // e.g. `NVTX range "train_step"`
  int64_t steps = 0;               // analysed steps
  int64_t steps_recorded = 0;
  int64_t warmup_skipped = 0;
  int64_t steps_untraced = 0;      // sampled recordings: steps left out because they were not traced
  // The untraced steps are record's control stretch (one untraced run with traced
  // steps before it), not --sample's stretches.
  bool control_stretch = false;
  // Sampled recordings: median step as the job saw it (CPU step bounds), traced
  // and untraced, when each side has a few steps; 0 otherwise.
  double traced_step_ms_median = 0, untraced_step_ms_median = 0;
  // The job as it runs without gpuscope (docs/rules.md, "The untraced job"):
  // its step time, measured on the GPU between two drains ("gpu_drained") or
  // from the untraced steps' CPU bounds ("cpu_steps"); 0 when unknown, and
  // `untraced_unknown` says why. traced_step_ms is the analysed steps' mean.
  double untraced_step_ms = 0, traced_step_ms = 0, tracing_cost_pct = 0;
  std::string untraced_method, untraced_unknown;
  // The control stretch's step when check_untraced found it implausible (then
  // untraced_step_ms is 0 and untraced_unknown says why); 0 otherwise.
  double untraced_rejected_ms = 0;
  // With ops recorded in some steps only (GPUSCOPE_TORCH_OP_STEPS): the median
  // analysed step that traced kernels without recording ops (its ops placed by
  // position; 48 of every 50 in a long job) and that recorded ops, with their
  // counts; 0 when there are none.
  double kernels_only_step_ms = 0, ops_step_ms = 0;
  int64_t kernels_only_steps = 0, ops_steps = 0;
  // How the rules' estimates on the traced steps were carried over to the
  // untraced job: CPU-side idle claims times cpu_idle_factor (the idle time
  // that exists untraced over the traced idle time), GPU-side savings times
  // gpu_saving_factor (the GPU's busy share of the untraced step).
  double cpu_idle_factor = 1, gpu_saving_factor = 1;
  // GPU idle per step between kernels that were queued back to back (their
  // median gap times the gaps per step); 0 when too few were seen to tell.
  // launch-bound and low-utilization claim only untraced idle above it:
  // launch_idle_factor is cpu_idle_factor with the floor taken out.
  double kernel_gap_floor_ms = 0, launch_idle_factor = 1;
  int64_t first_step = 0, last_step = 0;
  double step_ms_mean = 0, step_ms_median = 0, step_ms_p95 = 0, step_ms_min = 0, step_ms_max = 0;
  std::vector<int64_t> outlier_steps;
  // CUPTI's overhead records inside the analysed steps (`record --trace
  // ...,overhead`), per kind by total time: ms per analysed step and records.
  // Empty when none were recorded there.
  struct TracerOverhead {
    std::string name;  // e.g. "CUPTI overhead: buffer flush"
    double ms_per_step = 0;
    int64_t count = 0;
  };
  std::vector<TracerOverhead> tracer_overhead;
  double tracer_overhead_ms_per_step = 0;
  double gpu_utilization = 0;     // analysed device: GPU busy / step time
  double sm_efficiency = 0;       // estimated: time-weighted min(1, blocks / SMs)
  double tensor_core_share = 0;   // share of kernel time in tensor-core kernels (by name)
  std::vector<DeviceSummary> devices;
  int64_t kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ops = 0;  // in analysed steps
  // How the job ended (meta job_exit, written by `gpuscope record`); none in other recordings.
  std::optional<store::JobEnd> job;
};

struct KernelStat {
  std::string name, origin;  // origin: cuBLAS, cuDNN, ATen, Triton, NCCL, user
  bool tensor_core = false;
  int64_t count = 0, total_ns = 0, min_ns = 0, max_ns = 0;
  double mean_ns = 0, share = 0;  // share of the device's kernel time
  std::string grid, block;        // first launch seen, "x,y,z"
};

struct OpStat {
  std::string name;
  int64_t count = 0, self_cpu_ns = 0, cpu_ns = 0, gpu_ns = 0, kernels = 0;
  std::string shapes, dtypes;  // most frequent input shapes / dtypes (JSON text), may be empty
};

struct CopyStat {
  std::string kind;       // "memcpy" or "memset"
  std::string direction;  // HtoD, DtoH, DtoD, ... ("" for memset)
  std::string src_kind, dst_kind;  // pageable, pinned, device, ... (dst only for memset)
  int64_t count = 0, bytes = 0, total_ns = 0;
  double gb_per_s = 0;
};

struct ApiStat {
  std::string name;
  int64_t count = 0, total_ns = 0, max_ns = 0, failed = 0;
  double mean_ns = 0;
};

enum class IdleCause { kDataLoader, kHostSync, kAllocator, kCompile, kLaunch, kCpuCompute, kOther };
inline constexpr int kIdleCauses = 7;
const char* idle_cause_name(IdleCause c);  // "dataloader", "host_sync", ...

struct IdleCauseTotal {
  IdleCause cause = IdleCause::kOther;
  int64_t total_ns = 0, gaps = 0;
  double ms_per_step = 0, pct_of_step = 0;
  std::vector<TimeRange> largest;  // the longest gaps, for the viewer to jump to
};

struct IdleSummary {
  int64_t idle_ns = 0, gaps = 0;
  std::vector<IdleCauseTotal> causes;  // one per IdleCause, in enum order
};

struct MemoryPoint {
  int64_t ts_ns = 0;
  int64_t allocated = -1, reserved = -1, device_used = -1;  // -1: not recorded
};

struct MemorySummary {
  bool torch_allocator = false, cuda_events = false;
  int64_t capacity = 0;  // device total memory, 0 unknown
  int64_t peak_allocated = -1, peak_reserved = -1, peak_device_used = -1;
  double peak_fraction = 0;  // largest peak over capacity
  int64_t cuda_allocs = 0, cuda_frees = 0;  // cudaMalloc/cudaFree-level events in analysed steps
  int64_t failed_allocs = 0;                // allocation API calls that returned an error
  // With ops (and so allocator events) recorded in some steps only: allocation
  // calls in analysed steps that no allocator event followed, so memory grew
  // where the peaks above did not look (a note says so; not in the JSON's memory).
  int64_t unreported_allocs = 0;
  double allocs_per_step = 0;
  std::vector<MemoryPoint> timeline;  // downsampled, max per bucket
};

struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

struct Contributor {
  std::string name;
  double total_ms = 0;  // over the analysed steps
  int64_t count = 0;
  std::string detail;
};

struct Evidence {
  std::string summary;  // one sentence with the key numbers
  std::vector<Metric> metrics;
  std::vector<Contributor> top;
  std::vector<TimeRange> ranges;
};

struct Fix {
  std::string text;
  std::string code;  // Python, ready to paste
};

enum class Severity { kLow, kMedium, kHigh };
const char* severity_name(Severity s);

struct Finding {
  std::string id, title;
  Severity severity = Severity::kLow;
  double saving_ms_per_step = 0, saving_pct = 0;  // on the untraced job when its step time is known
  double traced_saving_ms = 0;                    // the rule's own estimate on the traced steps
  // Where the what-if replay priced the finding's fix (docs/rules.md, "What-if"):
  // the fix's id, the step predicted after it, and the saving's range in % of
  // the step (from the calibration's measured spread). predicted_step_ms 0: not priced.
  std::string fix_id;
  double predicted_step_ms = 0, saving_lo_pct = 0, saving_hi_pct = 0;
  Evidence evidence;
  Fix fix;
};

// One rank of a distributed job (a process with RANK set), over its own
// analysed steps (docs/rules.md, "Ranks"). Per-step times are means.
struct RankSummary {
  int64_t rank = 0, pid = 0;
  std::string host;
  int64_t device = -1;          // its busiest device, -1 without GPU activity
  int64_t steps = 0;            // analysed steps
  double step_ms_median = 0, step_ms_p95 = 0;
  double gpu_utilization = -1;  // -1 without GPU activity
  // Each moment of a step counted once, in this order: waiting in collectives,
  // loading data (DataLoader), computing (GPU work, torch ops, CUDA calls), other.
  double collective_ms_per_step = 0, data_ms_per_step = 0, compute_ms_per_step = 0, other_ms_per_step = 0;
  // The median step's own time (step time less the wait in collectives) and
  // wait in collectives: what the cross-rank rules compare, as a few steps that
  // a busy machine stretched move the means but not these.
  double own_ms_median = 0, collective_ms_median = 0;
  // NCCL kernel time per step (merged over streams) and the share of it during
  // which a compute kernel of the same device runs, as Holistic Trace Analysis's
  // get_comm_comp_overlap counts it (copies and memsets are neither); -1 without
  // NCCL kernels.
  double communication_ms_per_step = 0, comm_overlap_pct = -1;
  bool analysed = false;        // the process the rest of the report is about
  std::vector<TimeRange> slowest;  // its longest steps, for the viewer
};

// The what-if replay (docs/rules.md, "What-if"): the analysed steps replayed
// as a dependency graph, first as recorded (the model's own check), then with
// each fix applied, then the best sequence of fixes.
// A prediction corrected by what `gpuscope try` measured for the same fixes on
// this GPU (try_history.jsonl; analyzer/whatif/history.h). `tries`: the tries
// with a prediction to compare with; below kMinTries nothing is corrected.
struct TriesCorrection {
  int64_t tries = 0;
  bool corrected = false;
  double step_ms = 0, lo_ms = 0, hi_ms = 0, saving_pct = 0;  // the replay's own, before the correction
  double median_residual_pct = 0;  // measured step over predicted step, the median over tries, as a %
};

struct FixPrediction {
  std::string fix, title;
  bool applies = false;
  std::string why_not;             // when it does not apply
  double step_ms = 0, lo_ms = 0, hi_ms = 0;  // predicted step and its range
  double saving_pct = 0;           // of the job's step; negative: slower
  double cpu_ms = 0, gpu_ms = 0;   // the replay's CPU and GPU busy time per step after the fix
  // Applied alone it might slow the job (predicted slower, or its own bounds
  // reach a step over 1 % slower): kept out of the plan and of the findings.
  bool might_slow = false;
  std::optional<TriesCorrection> by_tries;
};

struct PlanStep {
  std::vector<std::string> fixes;  // cumulative, in the order applied
  double step_ms = 0, lo_ms = 0, hi_ms = 0;
  double saving_pct = 0;           // of the job's step, all fixes so far
  std::optional<TriesCorrection> by_tries;
};

struct WhatIf {
  bool available = false;
  std::string unavailable;         // why not, when not
  std::string calibration;         // the table used, e.g. "h200.json"
  bool calibration_measured = false;
  std::string calibration_path;    // where a table from outside the build was read; empty: embedded
  // The tries of `gpuscope try` on this GPU that the predictions were compared
  // with (try_history.jsonl); `tries` 0: none, and the JSON has no key for it.
  struct History {
    std::string file, gpu;
    int64_t tries = 0;          // lines for this GPU
    int64_t damaged_lines = 0;  // in the whole file, skipped
  } history;
  int64_t steps = 0;               // steps replayed
  double job_step_ms = 0;          // what predictions are anchored to: the untraced step, else the traced one
  double traced_step_ms = 0;       // the replayed steps' recorded mean
  double replay_traced_ms = 0;     // replay as recorded: must give traced_step_ms
  double replay_ms = 0;            // replay with tracing's per-call cost taken off: must give job_step_ms
  double cpu_ms = 0, gpu_ms = 0;   // that replay's CPU and GPU busy time per step
  int64_t queue_full_launches = 0; // launches that waited for room in the launch queue (counted as typical ones)
  double identity_error_pct = 0;   // replay_ms against job_step_ms
  double tracing_cost_per_call_us = 0;  // the per-call cost taken off
  double tracing_cost_per_op_us = 0;    // and the per-op cost
  // Where the untraced CPU ran ahead of the GPU: its step time, which the
  // per-call cost was fitted to (the replay's CPU alone); 0: fitted to job_step_ms.
  double cpu_pace_target_ms = 0;
  // What the replay sees on the GPU: ms per step by kind of task (gemm_fp32,
  // conv, group_norm, ...), as the fixes classify them.
  std::vector<std::pair<std::string, double>> gpu_ms_by_kind;
  std::vector<FixPrediction> fixes;
  std::vector<PlanStep> plan;
  std::vector<std::string> not_recommended;  // fixes predicted to slow the job, and why
  // Of those, the ones that might save but whose range reaches a slower step
  // (alone, or after the plan's fixes): what `gpuscope try --from` measures
  // beside the plan. Cumulative fixes, like a plan step's.
  std::vector<PlanStep> measure_first;
  // --what-if's combinations, each priced (fixes that do not apply to the job are left
  // out of `fixes` and named in `skipped`).
  struct Asked {
    std::vector<std::string> asked, fixes, skipped;
    double step_ms = 0, lo_ms = 0, hi_ms = 0, saving_pct = 0;
    std::optional<TriesCorrection> by_tries;
  };
  std::vector<Asked> asked;
};

// A fix `gpuscope try --attach` measured on this job (meta try_results), and the
// replay's prediction for the same fixes (analyzer/report/tried.h).
struct TriedFix {
  std::string variant;             // "amp+compile"
  std::vector<std::string> fixes;
  std::string state;               // measured, failed, not-applied, not-run
  std::string why;                 // when not measured
  double step_ms = 0;
  bool measured = false;
  double measured_saving_pct = 0, measured_low_pct = 0, measured_high_pct = 0;  // %, the rounds' range
  double p_value = 1;
  bool significant = false;
  std::optional<double> predicted_saving_pct, predicted_low_pct, predicted_high_pct;
  std::optional<bool> within_range;  // the measured range overlaps the predicted one
};

struct Analysis {
  Summary summary;
  Breakdown breakdown;  // over all analysed steps
  std::vector<StepInfo> steps;
  std::vector<KernelStat> top_kernels;
  std::vector<OpStat> top_ops;
  std::vector<CopyStat> copies;
  std::vector<ApiStat> api_calls;
  IdleSummary idle;
  MemorySummary memory;
  std::vector<RankSummary> ranks;  // by rank; empty unless several processes carry a rank
  std::vector<Finding> findings;  // ranked by saving, largest first
  WhatIf whatif;
  std::vector<TriedFix> tried;    // `gpuscope try --attach`'s measurements, when the recording has them
  std::vector<std::string> notes; // what is missing or assumed, one line each
};

}  // namespace gpuscope::analyzer
