// Every GPUSCOPE_* environment variable, in one table with its default and its
// meaning (CONVENTIONS.md item 13). The collector, the CLI, the analyzer and
// the torch plugin read them only through here; header-only because the
// plugin is built on its own, against libtorch. `gpuscope record --help-env`
// prints the table, docs/settings.md lists it, and tests/trace_formats/common/settings_test.cpp
// fails on a GPUSCOPE_ variable read anywhere else. Benchmark and test
// switches of bench/ and tests/ (GPUSCOPE_CALIBRATE, GPUSCOPE_KEEP_TMP, ...)
// stay there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gpuscope::settings {

// X(id, name, default, meaning). The meaning is one line for --help-env.
#define GPUSCOPE_SETTINGS(X)                                                                                        \
  X(kOutput, "GPUSCOPE_OUTPUT", "gpuscope_%p.db",                                                                  \
    "recording file; %p pid, %h host, %q{VAR} an environment variable (record -o sets it)")                        \
  X(kTrace, "GPUSCOPE_TRACE", "cuda,nvtx,torch",                                                                    \
    "sources, comma-separated, from cuda,nvtx,torch,memory,nvml,overhead (record --trace sets it)")                 \
  X(kSampleMs, "GPUSCOPE_SAMPLE_MS", "off", "ON,OFF: trace ON ms out of every ON+OFF ms (record --sample sets it)") \
  X(kTraceSteps, "GPUSCOPE_TRACE_STEPS", "all",                                                                     \
    "A-B or A-: trace torch steps A to B only (numbered from 0, as analyze --steps takes them; record --steps); "  \
    "on-demand: dormant until gpuscope trigger asks (record --on-demand)")                                          \
  X(kControlSteps, "GPUSCOPE_CONTROL_STEPS", "3,8,200",                                                             \
    "W,N[,MS]: after W torch steps leave N steps, at least MS ms, untraced to time the job without gpuscope; "     \
    "0 off (record --full sets it)")                                                                               \
  X(kOriginNs, "GPUSCOPE_ORIGIN_NS", "0",                                                                           \
    "set by record: the recording's clock origin, CLOCK_MONOTONIC ns (0: the file's, or now)")                     \
  X(kWindowStartNs, "GPUSCOPE_WINDOW_START_NS", "0", "set by record --delay: trace from this CLOCK_MONOTONIC ns")   \
  X(kWindowEndNs, "GPUSCOPE_WINDOW_END_NS", "0", "set by record --duration: trace until this CLOCK_MONOTONIC ns")   \
  X(kDriverApi, "GPUSCOPE_DRIVER_API", "1", "0: no CUDA driver API records")                                       \
  X(kRuntimeApi, "GPUSCOPE_RUNTIME_API", "1", "0: no CUDA runtime API records")                                    \
  X(kPeriodicFlush, "GPUSCOPE_PERIODIC_FLUSH", "1", "0: CUPTI hands over only full buffers (no flush every 100 ms)") \
  X(kMinFreeMb, "GPUSCOPE_MIN_FREE_MB", "256",                                                                      \
    "the recording stops (the job runs on untraced) when its file system has fewer MB free; 0: never")             \
  X(kCuptiFinalize, "GPUSCOPE_CUPTI_FINALIZE", "1 where tracing switches",                                          \
    "0: CUPTI stays initialized while untraced (--sample, --delay, --duration, control stretch); 1: torn down")     \
  X(kCupti, "GPUSCOPE_CUPTI", "searched", "path of libcupti when none is loaded in the process")                  \
  X(kCuptiAttributes, "GPUSCOPE_CUPTI_ATTRIBUTES", "CUPTI's defaults",                                              \
    "N=V,...: CUpti_ActivityAttribute N (cupti_activity.h) set to V before tracing starts, e.g. 0=33554432")       \
  X(kDisable, "GPUSCOPE_DISABLE", "unset", "set (any value): the collector does nothing in this process")          \
  X(kCrashTrace, "GPUSCOPE_CRASH_TRACE", "unset", "set: a backtrace on stderr at SIGSEGV, SIGBUS, SIGABRT")         \
  X(kTorchPlugin, "GPUSCOPE_TORCH_PLUGIN", "the cache's, else next to the collector",                               \
    "path of libgpuscope_torch.so (default: the one gpuscope setup torch built for the job's torch)")               \
  X(kCacheDir, "GPUSCOPE_CACHE_DIR", "$XDG_CACHE_HOME/gpuscope, or ~/.cache/gpuscope",                              \
    "per-user cache: gpuscope setup torch builds the torch plugin into torch/VERSION/ there")                    \
  X(kTorchOps, "GPUSCOPE_TORCH_OPS", "1", "0: no ops (ranges and steps stay)")                                     \
  X(kTorchShapes, "GPUSCOPE_TORCH_SHAPES", "1", "0: no op input shapes or dtypes")                                 \
  X(kTorchDataLoaderOps, "GPUSCOPE_TORCH_DATALOADER_OPS", "0",                                                    \
    "1: ops inside a main-process DataLoader fetch too (by default its range is recorded, its ops are not)")      \
  X(kTorchOpSteps, "GPUSCOPE_TORCH_OP_STEPS", "0 (record: auto; record --full: 0)",                               \
    "N/M: ops in the first N steps of every M (N: of each traced stretch), the other steps' kernels get their ops " \
    "by position after record's job; auto: 2/50 when the job's torch has CUDA, else 0; 0: ops in every step")      \
  X(kTorchMemory, "GPUSCOPE_TORCH_MEMORY", "1", "0: no allocator memory")                                          \
  X(kTorchCpuMemory, "GPUSCOPE_TORCH_CPU_MEMORY", "0", "1: the CPU allocator's memory too")                        \
  X(kTorchMemorySteps, "GPUSCOPE_TORCH_MEMORY_STEPS", "2 (record --full: 0)",                                        \
    "allocator memory in the first N steps of each traced stretch; 0: in every traced step")                      \
  X(kTorchExternalIds, "GPUSCOPE_TORCH_EXTERNAL_IDS", "0 under record, else 1",                                     \
    "1: ops linked to kernels through CUPTI external correlation (slower) instead of by thread and time")          \
  X(kCollector, "GPUSCOPE_COLLECTOR", "next to gpuscope, or ../lib", "record: path of libgpuscope_collector.so")   \
  X(kAnalyzeTiming, "GPUSCOPE_ANALYZE_TIMING", "unset", "set: analyze prints its phase timings on stderr")   \
  X(kPython, "GPUSCOPE_PYTHON", "/usr/bin/python3",                                                                 \
    "cluster: the Python that runs the Dask driver (needs python3-distributed)")                                  \
  X(kClusterDriver, "GPUSCOPE_CLUSTER_DRIVER", "next to gpuscope, ../share/gpuscope, or the source tree",             \
    "cluster: path of gpuscope_cluster.py, the Dask driver")

enum class Id : int {
#define GPUSCOPE_SETTING_ID(id, name, default_value, meaning) id,
  GPUSCOPE_SETTINGS(GPUSCOPE_SETTING_ID)
#undef GPUSCOPE_SETTING_ID
};

struct Setting {
  Id id;
  const char* name;
  const char* default_value;  // as text, for people
  const char* meaning;
};

inline constexpr Setting kSettings[] = {
#define GPUSCOPE_SETTING_ROW(id, name, default_value, meaning) {Id::id, name, default_value, meaning},
    GPUSCOPE_SETTINGS(GPUSCOPE_SETTING_ROW)
#undef GPUSCOPE_SETTING_ROW
};
inline constexpr size_t kCount = sizeof kSettings / sizeof kSettings[0];

constexpr const Setting& setting(Id id) { return kSettings[static_cast<size_t>(id)]; }
constexpr const char* name(Id id) { return setting(id).name; }

// The value, nullptr when unset: the one place a GPUSCOPE_ variable is read.
inline const char* raw(Id id) { return std::getenv(name(id)); }
inline bool is_set(Id id) { return raw(id) != nullptr; }
// Set and not empty; nullptr otherwise.
inline const char* text(Id id) {
  const char* v = raw(id);
  return v && *v ? v : nullptr;
}
// Whether the value is exactly `value` ("0" for the switches that take a cost out).
inline bool equals(Id id, const char* value) {
  const char* v = raw(id);
  return v && std::strcmp(v, value) == 0;
}
// The value read as an unsigned decimal (strtoull), 0 when unset.
inline uint64_t u64(Id id) {
  const char* v = raw(id);
  return v ? std::strtoull(v, nullptr, 10) : 0;
}
// Unset or empty: `fallback`; "0": false; anything else: true.
inline bool flag(Id id, bool fallback) {
  const char* v = text(id);
  return v ? std::strcmp(v, "0") != 0 : fallback;
}

}  // namespace gpuscope::settings
