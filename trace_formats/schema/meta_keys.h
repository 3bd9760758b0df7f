// The keys of the `meta` table, declared once: code names them here
// (meta_key::kOriginNs), docs/schema.md lists them from kMetaKeys, and
// scripts/check_meta_keys.py fails on a key spelled as a string literal where
// meta is read or written anywhere else. Header-only: the torch plugin (built
// on its own) writes keys too.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace gpuscope::meta_key {

// Every recording.
inline constexpr std::string_view kSchemaVersion = "schema_version";
inline constexpr std::string_view kOriginNs = "origin_ns";
inline constexpr std::string_view kOriginUtcNs = "origin_utc_ns";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kGpuscopeVersion = "gpuscope_version";
inline constexpr std::string_view kTrace = "trace";
// `gpuscope record`'s options and how the job ended.
inline constexpr std::string_view kCommand = "command";
inline constexpr std::string_view kSample = "sample";
inline constexpr std::string_view kFull = "full";
inline constexpr std::string_view kTraceSteps = "trace_steps";
inline constexpr std::string_view kJobExit = "job_exit";
inline constexpr std::string_view kJobWallNs = "job_wall_ns";
inline constexpr std::string_view kJobSteps = "job_steps";
inline constexpr std::string_view kJobKey = "job_key";
inline constexpr std::string_view kRecordingStopped = "recording_stopped";
inline constexpr std::string_view kDistributedBackend = "distributed_backend";
// The torch plugin.
inline constexpr std::string_view kTorchVersion = "torch_version";
inline constexpr std::string_view kTorchGitVersion = "torch_git_version";
inline constexpr std::string_view kTorchCudaVersion = "torch_cuda_version";
inline constexpr std::string_view kTorchBuild = "torch_build";
inline constexpr std::string_view kTorchPluginBuiltFor = "torch_plugin_built_for";
inline constexpr std::string_view kTorchOpSteps = "torch_op_steps";
inline constexpr std::string_view kTorchOpStepsChanged = "torch_op_steps_changed";
inline constexpr std::string_view kTorchOpCallback = "torch_op_callback";
// Ops placed by position after `record` (trace_formats/store/place_ops.h).
inline constexpr std::string_view kOpsPlaced = "ops_placed";
inline constexpr std::string_view kOpsPlacedSteps = "ops_placed_steps";
inline constexpr std::string_view kOpsUnplacedSteps = "ops_unplaced_steps";
inline constexpr std::string_view kOpsPlacedStepsWithExtraCalls = "ops_placed_steps_with_extra_calls";
// A capture on demand (docs/on-demand.md).
inline constexpr std::string_view kSource = "source";
inline constexpr std::string_view kCaptureRequest = "capture_request";
inline constexpr std::string_view kCaptureTrigger = "capture_trigger";
inline constexpr std::string_view kCaptureEndedEarly = "capture_ended_early";
// `gpuscope import` of a torch.profiler trace.
inline constexpr std::string_view kImportedFrom = "imported_from";
inline constexpr std::string_view kTraceSchemaVersion = "trace_schema_version";
inline constexpr std::string_view kTraceDisplayTimeUnit = "trace_display_time_unit";
// `gpuscope try --attach` (docs/try.md).
inline constexpr std::string_view kTryResults = "try_results";
// `gpuscope merge`: the inputs' count, the merging build, and per input N the
// keys merge.N.<part> of kMergeInputParts.
inline constexpr std::string_view kMergeFiles = "merge.files";
inline constexpr std::string_view kMergeGpuscopeVersion = "merge.gpuscope_version";
inline constexpr std::string_view kMergePrefix = "merge.";
namespace merge_part {
inline constexpr std::string_view kFile = "file";
inline constexpr std::string_view kHost = "host";
inline constexpr std::string_view kRanks = "ranks";
inline constexpr std::string_view kOffsetNs = "offset_ns";
inline constexpr std::string_view kAlignedOn = "aligned_on";
inline constexpr std::string_view kResidualNs = "residual_ns";
inline constexpr std::string_view kMaxDeviationNs = "max_deviation_ns";
inline constexpr std::string_view kCollectives = "collectives";
inline constexpr std::string_view kPids = "pids";
}  // namespace merge_part
// merge.<n>.<part>, part one of merge_part.
inline std::string merge_input(int n, std::string_view part) {
  return std::string(kMergePrefix) + std::to_string(n) + "." + std::string(part);
}

struct Key {
  std::string_view name;
  std::string_view doc;
};

inline constexpr std::array kMetaKeys{
    Key{kSchemaVersion, "Schema version of the file; every reader checks it (readers refuse a newer one)."},
    Key{kOriginNs, "The recording's time origin, CLOCK_MONOTONIC ns of the recording host; every time column counts from it."},
    Key{kOriginUtcNs, "The same instant in ns since the Unix epoch, UTC."},
    Key{kHost, "Host name (in a `gpuscope merge` output, the inputs' hosts joined by commas)."},
    Key{kGpuscopeVersion, "The gpuscope version that wrote the file."},
    Key{kTrace, "The sources recorded (`GPUSCOPE_TRACE`)."},
    Key{kCommand, "The job's command line, as `gpuscope record` ran it."},
    Key{kSample, "`record --sample` as given (ON,OFF), when given."},
    Key{kFull, "`1` after `record --full`."},
    Key{kTraceSteps, "`record --steps A-B` (or `on-demand`), when given."},
    Key{kJobExit, "How the job ended: `exit N` (its exit code) or `signal NAME`, e.g. `signal SIGINT`."},
    Key{kJobWallNs, "The job's wall time, from its start to its end."},
    Key{kJobSteps, "Steps the job completed, the most of any of its processes."},
    Key{kJobKey, "What the processes of one distributed job share (TORCHELASTIC_RUN_ID, MASTER_ADDR, MASTER_PORT, SLURM_JOB_ID as the first rank saw them)."},
    Key{kRecordingStopped, "Why the collector stopped recording before the job ended (its file system fell below `GPUSCOPE_MIN_FREE_MB`, or a write failed); absent otherwise."},
    Key{kDistributedBackend, "The distributed backend of an imported torch.profiler trace (its distributedInfo), when it names one."},
    Key{kTorchVersion, "The job's torch version (torch plugin)."},
    Key{kTorchGitVersion, "torch's git revision."},
    Key{kTorchCudaVersion, "The CUDA version torch was built with."},
    Key{kTorchBuild, "torch's build configuration summary."},
    Key{kTorchPluginBuiltFor, "The torch version the plugin was built against."},
    Key{kTorchOpSteps, "The steps the torch plugin recorded ops in: `0` every step, `N/M` the first N of every M."},
    Key{kTorchOpStepsChanged, "`0` when the plugin went to every step because shapes changed."},
    Key{kTorchOpCallback, "`registered` when the plugin's op callback was; `none` with `GPUSCOPE_TORCH_OPS=0` (torch then calls no callback for ops)."},
    Key{kOpsPlaced, "After `record`: the number of ops given by position to the steps the plugin recorded no ops in (docs/ARCHITECTURE.md)."},
    Key{kOpsPlacedSteps, "Steps that got ops by position."},
    Key{kOpsUnplacedSteps, "Steps whose GPU calls did not match a recorded step's, left without ops."},
    Key{kOpsPlacedStepsWithExtraCalls, "Placed steps that held a recorded step's GPU calls with others before or after them."},
    Key{kSource, "Where a capture came from: `gpuscope trigger`, or `gpuscope capture` for one the job made itself."},
    Key{kCaptureRequest, "What `trigger` asked for: `steps=N` or `seconds=S`, `control=C`."},
    Key{kCaptureTrigger, "What started the capture: `gpuscope trigger`, `gpuscope_capture_start`, or the rule that fired, e.g. `slow-step: step 57 took 412.0 ms, 20.3x the median ...`."},
    Key{kCaptureEndedEarly, "`1`: a process ended during the capture (SIGKILL, a crash) and `trigger` closed its traced stretch from the file (from its first step with ops to its last step's end)."},
    Key{kImportedFrom, "The torch.profiler trace an imported recording came from."},
    Key{kTraceSchemaVersion, "The imported trace's schemaVersion."},
    Key{kTraceDisplayTimeUnit, "The imported trace's displayTimeUnit."},
    Key{kTryResults, "`gpuscope try --attach`: the fixes measured on this job, its `--format json` document (schema `gpuscope-try/1`, docs/try.md); `analyze` shows them as measured beside the replay's predictions."},
    Key{kMergeFiles, "In a `gpuscope merge` output: the number of inputs."},
    Key{kMergeGpuscopeVersion, "The gpuscope version that merged."},
    Key{"merge.N.<part>", "Per input N (0 is the reference clock): `file`, `host`, `ranks`, `offset_ns` (added to its times), `aligned_on`, `residual_ns`, `max_deviation_ns`, `collectives` and `pids` (renumbered pids, `old:new,...`)."},
};

}  // namespace gpuscope::meta_key
