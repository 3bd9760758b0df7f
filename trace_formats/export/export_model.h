// What every exporter needs from a recording besides the event rows:
// processes, threads, devices, the time origin, correlation look-ups, and
// cached renderings of interned strings. Rows themselves are streamed by the
// exporters, so memory grows with distinct names and correlations (see
// correlation_map.h), never with other events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/export/correlation_map.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::formats {

struct ProcessInfo {
  int64_t pid = 0;
  std::string host, exe, cmdline;
  int64_t rank = INT64_MIN, world_size = INT64_MIN, start_utc_ns = 0;
  int index = 0;  // position in pid order
};

struct ThreadInfo {
  int64_t pid = 0, tid = 0;
  std::string name;
};

struct DeviceInfo {
  int64_t id = 0;
  std::string name, uuid;
  int64_t sm_count = 0, total_memory = 0, compute_major = 0, compute_minor = 0;
  int64_t memory_bandwidth = 0, core_clock_khz = 0;
};

class ExportModel {
 public:
  // `only_pid` restricts every query to one process (TensorBoard writes a file per process).
  ExportModel(store::Reader& reader, std::optional<int64_t> only_pid = std::nullopt);

  store::Reader& reader() { return r_; }
  const std::vector<ProcessInfo>& processes() const { return processes_; }
  const std::vector<ThreadInfo>& threads() const { return threads_; }
  const std::vector<DeviceInfo>& devices() const { return devices_; }
  // meta origin_utc_ns, or nullopt when the recording has none.
  std::optional<int64_t> origin_utc_ns() const { return origin_utc_; }
  std::string meta(std::string_view key, std::string_view fallback = {}) { return r_.meta(key, fallback); }

  // The one process exported, or nullopt for all.
  std::optional<int64_t> only_pid() const { return only_pid_; }
  // " WHERE pid=N" / " AND pid=N" (with a table alias prefix) or "" for all processes.
  std::string where_pid(const char* alias = "") const;
  std::string and_pid(const char* alias = "") const;
  // count(*) of a table, for the exported processes.
  size_t count_rows(const char* table);

  std::string_view str(int64_t id) { return r_.str(id); }
  // The string as a JSON literal (escaped, valid UTF-8), cached per id.
  const std::string& json_string(int64_t id);
  // A column holding JSON text (shapes, dtypes): verbatim when it is valid
  // JSON, otherwise as a JSON string literal. Cached per id.
  const std::string& json_value(int64_t id);

  // Flow ids unique across processes of one file.
  uint64_t flow_id(int64_t pid, int64_t correlation) const;
  // Device of a CUDA context, from the kernels/copies seen on it (0 if unknown).
  int64_t context_device(int64_t pid, int64_t context);
  int64_t sm_count(int64_t device) const;

  // distributedInfo of the file: the first process's rank and world size
  // unless set here (per-process files of an unranked multi-process run).
  void set_distributed(int64_t rank, int64_t world_size) { dist_ = {rank, world_size}; }
  std::pair<int64_t, int64_t> distributed() const;

  // What is known of each correlation of the exported processes
  // (correlation_map.h), filled by load_correlations, by the Chrome API pass
  // (api_call_correlation) or by an exporter that reads the rows itself.
  CorrelationMap& correlations() { return corr_; }
  enum CorrelationPart : unsigned { kExternalIds = 1, kGpuActivity = 2, kApiCalls = 4 };
  // Loads the parts not loaded yet: a scan of external_correlation, of the
  // three GPU tables, or of api_call.
  void load_correlations(unsigned parts);

  // The entry of a row's pid and correlation, NULL as store::kNull (a
  // cursor's record); nullptr when either is NULL (SQL's `=` never matched
  // NULL) or nothing is known of it.
  const CorrelationMap::Entry* correlation(int64_t pid, int64_t corr) {
    if (pid == store::kNull || corr == store::kNull) return nullptr;
    return corr_.find(pid, corr);
  }
  // As correlation(), for an API call row read in full before any GPU row:
  // also marks the correlation as launched by an API call (correlation 0
  // launches nothing). Saves the kApiCalls scan.
  const CorrelationMap::Entry* api_call_correlation(int64_t pid, int64_t corr) {
    if (corr != 0 && corr != store::kNull && pid != store::kNull) {
      CorrelationMap::Entry& e = corr_.upsert(pid, corr);
      e.api = true;
      return &e;
    }
    return correlation(pid, corr);
  }
  // The same for rows read with int64() from columns pid_col and corr_col
  // (int64() reads NULL as 0).
  const CorrelationMap::Entry* correlation(const store::Statement& q, int pid_col, int64_t pid, int corr_col,
                                           int64_t corr) {
    if ((pid == 0 && q.is_null(pid_col)) || (corr == 0 && q.is_null(corr_col))) return nullptr;
    return corr_.find(pid, corr);
  }
  const CorrelationMap::Entry* api_call_correlation(const store::Statement& q, int pid_col, int64_t pid,
                                                    int corr_col, int64_t corr) {
    if (corr != 0 && (pid != 0 || !q.is_null(pid_col))) {
      CorrelationMap::Entry& e = corr_.upsert(pid, corr);
      e.api = true;
      return &e;
    }
    return correlation(q, pid_col, pid, corr_col, corr);
  }

 private:
  store::Reader& r_;
  std::optional<int64_t> only_pid_;
  std::vector<ProcessInfo> processes_;
  std::vector<ThreadInfo> threads_;
  std::vector<DeviceInfo> devices_;
  std::optional<int64_t> origin_utc_;
  std::vector<std::string> json_strings_, json_values_;
  std::vector<uint8_t> have_string_, have_value_;
  std::map<int64_t, int> process_index_;
  std::map<std::pair<int64_t, int64_t>, int64_t> context_device_;
  bool context_loaded_ = false;
  unsigned corr_loaded_ = 0;
  CorrelationMap corr_;
  std::optional<std::pair<int64_t, int64_t>> dist_;
};

}  // namespace gpuscope::formats
