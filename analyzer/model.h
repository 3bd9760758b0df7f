// The analysis model: one process of a recording loaded into compact columns,
// each sorted by start time. Names stay string ids (the Reader's string table);
// nothing here holds a per-row heap string. ~24-48 bytes per event.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyzer/names.h"
#include "trace_formats/common/time_math.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/job_end.h"

namespace gpuscope::store {
class Reader;
class Connection;
}

namespace gpuscope::analyzer {

inline constexpr uint32_t kNone = UINT32_MAX;

// Rows with times beyond kMaxTimeNs (common/time_math.h) are dropped at load,
// so sums cannot overflow.
inline bool sane_times(int64_t start, int64_t end) {
  return start >= -kMaxTimeNs && end <= kMaxTimeNs && end >= start;
}

struct KernelRec {
  int64_t start = 0;
  uint32_t dur = 0;  // ns, saturated at 4.29 s
  uint32_t name = 0, corr = 0, stream = 0;
  uint32_t blocks = 0;  // grid x*y*z, saturated
  uint16_t device = 0;
  int64_t end() const { return start + dur; }
};
static_assert(sizeof(KernelRec) == 32);

struct CopyRec {  // memcpy and memset
  int64_t start = 0, bytes = 0;
  uint32_t dur = 0, corr = 0, stream = 0;
  uint16_t device = 0;
  uint8_t copy_kind = schema::copy_kind::unknown;
  // memset: dst_kind = memory kind
  uint8_t src_kind = schema::mem_kind::unknown, dst_kind = schema::mem_kind::unknown;
  bool memset = false;
  int64_t end() const { return start + dur; }
};
static_assert(sizeof(CopyRec) == 40);

struct ApiRec {
  int64_t start = 0;
  uint32_t dur = 0, name = 0, corr = 0;
  ApiClass cls = ApiClass::kOther;
  bool failed = false;  // return code != 0
  int64_t end() const { return start + dur; }
};
static_assert(sizeof(ApiRec) == 24);

struct SyncRec {
  int64_t start = 0, end = 0;
  uint32_t corr = 0;
  uint8_t type = schema::sync_type::unknown;
};

struct RangeRec {
  int64_t start = 0, end = 0;
  uint32_t name = 0, thread = 0;
  int32_t depth = -1;  // -1: not a push/pop range
  uint8_t source = 0;
};

struct OpRec {
  int64_t start = 0, end = 0, ext = 0;
  uint32_t name = 0, shapes = kNone, dtypes = kNone, thread = 0;
};
static_assert(sizeof(OpRec) == 40);

struct StepRow {
  int64_t number = 0, start = 0, end = 0, source = 0;
};

struct TorchMemRec {
  int64_t ts = 0, allocated = 0, reserved = 0;
  uint16_t device = 0;
};

struct CudaMemRec {
  int64_t ts = 0, delta = 0;  // + alloc, - free (device memory only)
  uint16_t device = 0;
};

struct DeviceInfo {
  int64_t id = 0;
  std::string name;
  int64_t sm_count = 0, total_memory = 0;
};

// Key -> index. Dense array when the keys are compact (correlation ids are),
// sorted pairs otherwise. Key 0 is "none" (a row CUPTI gave no correlation, or
// one the collector unlinked): never stored, never found.
class IdMap {
 public:
  void build(std::vector<std::pair<uint64_t, uint32_t>> pairs);
  // Builds from n entries get(i) -> (key, value), skipping value kNone, without a
  // pairs copy when the keys are dense (they usually are).
  template <class Get>
  void build_fn(size_t n, Get get) {
    uint64_t max_key = 0;
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      auto [k, v] = get(i);
      if (v == kNone || k == 0) continue;
      max_key = std::max(max_key, k);
      ++count;
    }
    dense_.clear();
    sparse_.clear();
    if (count == 0) return;
    if (max_key <= 4 * count + 65536) {
      dense_.assign(max_key + 1, kNone);
      for (size_t i = 0; i < n; ++i) {
        auto [k, v] = get(i);
        if (v != kNone) dense_[k] = v;  // a key 0 is never found (find)
      }
      return;
    }
    std::vector<std::pair<uint64_t, uint32_t>> pairs;
    pairs.reserve(count);
    for (size_t i = 0; i < n; ++i) {
      auto p = get(i);
      if (p.second != kNone) pairs.push_back(p);
    }
    build(std::move(pairs));  // drops key 0
  }
  uint32_t find(uint64_t key) const;
  bool empty() const { return dense_.empty() && sparse_.empty(); }

 private:
  std::vector<uint32_t> dense_;
  std::vector<std::pair<uint64_t, uint32_t>> sparse_;
};

struct Model {
  std::string path, file_name;
  int64_t pid = 0, processes = 0;
  std::string cupti_status;
  bool imported = false;  // meta source: a torch.profiler import
  bool capture = false;   // meta capture_trigger: a capture on demand (trigger, gpuscope.profile)
  // Ops recorded in some steps only (meta torch_op_steps, e.g. "2/50"; empty: every
  // step), and after record the steps given ops by position and those that matched none.
  std::string op_steps;
  int64_t ops_placed_steps = 0, ops_unplaced_steps = 0;
  int64_t ops_placed_steps_with_extra_calls = 0;  // of ops_placed_steps: with calls of their own around the match
  std::string recording_stopped;  // meta recording_stopped: why the collector stopped before the job ended
  std::optional<store::JobEnd> job;  // meta job_exit: how the job ended (`gpuscope record`)
  std::vector<DeviceInfo> devices;
  const std::vector<std::string>* strings = nullptr;  // owned by the Reader

  std::vector<StepRow> step_rows;  // from the step table, this pid
  std::vector<RangeRec> ranges;    // every range of this pid (not windowed), sampling windows aside
  // CUPTI's overhead records (`record --trace ...,overhead`, range source
  // tracer_overhead), by start: not the job's ranges, so kept apart.
  std::vector<RangeRec> tracer_overhead;
  // Sampled recordings (`gpuscope record --sample`): the stretches that were
  // traced (range source 7), by start; empty when everything was.
  std::vector<std::pair<int64_t, int64_t>> sampling_windows;
  // The last stretch had no range (the job was killed inside it): closed at the last event (store/stretches.h).
  bool stretch_closed_by_reader = false;
  // Untraced stretches measured on the GPU (range source untraced_drained), by start.
  std::vector<std::pair<int64_t, int64_t>> untraced_spans;
  int64_t lo = 0, hi = 0;          // the window events were loaded for

  std::vector<KernelRec> kernels;
  std::vector<std::array<uint32_t, 6>> kernel_config;  // by name id: first grid x,y,z and block x,y,z seen
  std::vector<CopyRec> copies;
  std::vector<ApiRec> apis;
  std::vector<SyncRec> syncs;
  std::vector<OpRec> ops;
  std::vector<TorchMemRec> torch_mem;  // whole recording
  std::vector<CudaMemRec> cuda_mem;    // whole recording
  std::vector<std::pair<uint32_t, int64_t>> ext_links;  // (correlation, external id), dropped after linking
  std::unordered_map<uint32_t, int64_t> compiled_region_first_run;  // name id -> first start, whole recording
  // The recording shows torch.compile at work somewhere (a "Torch-Compiled
  // Region" or "TorchDynamo Cache Lookup" op), in any step whose ops were recorded.
  bool torch_compile = false;

  IdMap api_by_corr;   // correlation -> apis index
  IdMap op_by_corr;    // correlation -> ops index (innermost op that launched it)
  std::vector<uint32_t> op_parent;  // enclosing op on the same thread, kNone at top level
  std::vector<int64_t> op_self;     // self CPU time, ns

  std::string_view str(uint32_t id) const {
    if (!strings || id >= strings->size()) return {};
    return (*strings)[id];
  }
  const DeviceInfo* device(int64_t id) const {
    for (const auto& d : devices)
      if (d.id == id) return &d;
    return nullptr;
  }
};

struct LoadOptions {
  std::optional<int64_t> pid, device;
  bool progress = false;
};

// How load_header picks the process without --pid: the first criterion (tier)
// any process has a value for (1 the collector's kernel record count, 2 kernel
// time, 3 steps, 4 ranges, 5 ops, 6 API calls; 0 kernel time on --device; 7
// none), then the largest value; of equal values the first row, in table order
// for tier 1 and by pid for the others. `gpuscope cluster` repeats the choice
// over many files from these numbers.
struct PidChoice {
  int64_t pid = 0;
  int tier = 7;
  int64_t value = 0;
  int64_t row = 0;  // its row among the tier's rows
};
PidChoice choose_default_pid(store::Connection& db, const std::vector<int64_t>& pids, std::optional<int64_t> device);

// Opens the process-level view: picks the pid, reads devices, strings, ranges
// and step rows. Throws Error naming the file when there is nothing to analyse.
Model load_header(store::Reader& reader, const LoadOptions& options);
// Loads the events of model.pid overlapping [lo, hi) on two threads and sorts them.
void load_events(store::Reader& reader, Model& model, int64_t lo, int64_t hi, bool progress);
// Correlation id -> index of the API call in m.apis (before link_model has
// filled m.api_by_corr).
IdMap apis_by_correlation(const Model& m);
// Links ops to their kernels and API calls (op_by_corr, api_by_corr, op_parent, op_self).
void link_model(Model& model);
// Drops kernels, copies, API calls, ops and syncs that start at or after `end`
// (the events are sorted by start) and narrows the window to it.
void trim_events_after(Model& model, int64_t end);
// Drops the events that end before `begin` (loaded before the steps were known).
void trim_events_before(Model& model, int64_t begin);

}  // namespace gpuscope::analyzer
