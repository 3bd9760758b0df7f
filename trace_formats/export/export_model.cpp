#include "export/export_model.h"

#include "common/text.h"
#include "export/json_text.h"

namespace gpuscope::formats {

ExportModel::ExportModel(store::Reader& reader, std::optional<int64_t> only_pid)
    : r_(reader), only_pid_(only_pid) {
  // Exports read every table once plus point look-ups of correlations: a
  // larger page cache and memory-mapped reads keep those off the syscall path.
  r_.db().exec("PRAGMA cache_size=-131072; PRAGMA mmap_size=1073741824;");
  auto p = r_.query("SELECT pid, host, exe, cmdline, rank, world_size, start_utc_ns FROM process" + where_pid() +
                    " ORDER BY pid");
  while (p.step()) {
    ProcessInfo info;
    info.pid = p.int64(0);
    info.host = p.text(1);
    info.exe = p.text(2);
    info.cmdline = p.text(3);
    info.rank = p.is_null(4) ? INT64_MIN : p.int64(4);
    info.world_size = p.is_null(5) ? INT64_MIN : p.int64(5);
    info.start_utc_ns = p.is_null(6) ? 0 : p.int64(6);
    info.index = static_cast<int>(processes_.size());
    process_index_[info.pid] = info.index;
    processes_.push_back(std::move(info));
  }
  auto t = r_.query("SELECT pid, tid, name FROM thread" + where_pid() + " ORDER BY pid, tid");
  while (t.step()) threads_.push_back({t.int64(0), t.int64(1), std::string(t.text(2))});
  auto d = r_.query(
      "SELECT id, name, uuid, sm_count, total_memory, compute_major, compute_minor, memory_bandwidth, "
      "core_clock_khz FROM device ORDER BY id");
  while (d.step()) {
    DeviceInfo info;
    info.id = d.int64(0);
    info.name = d.text(1);
    info.uuid = d.text(2);
    info.sm_count = d.int64(3);
    info.total_memory = d.int64(4);
    info.compute_major = d.int64(5);
    info.compute_minor = d.int64(6);
    info.memory_bandwidth = d.int64(7);
    info.core_clock_khz = d.int64(8);
    devices_.push_back(std::move(info));
  }
  std::string utc = r_.meta("origin_utc_ns");
  if (!utc.empty()) origin_utc_ = std::atoll(utc.c_str());
}

size_t ExportModel::count_rows(const char* table) {
  return static_cast<size_t>(r_.db().query_int("SELECT count(*) FROM " + std::string(table) + where_pid()).value_or(0));
}

std::string ExportModel::where_pid(const char* alias) const {
  return only_pid_ ? " WHERE " + std::string(alias) + "pid=" + std::to_string(*only_pid_) : "";
}

std::string ExportModel::and_pid(const char* alias) const {
  return only_pid_ ? " AND " + std::string(alias) + "pid=" + std::to_string(*only_pid_) : "";
}

const std::string& ExportModel::json_string(int64_t id) {
  size_t n = r_.strings().size();
  if (json_strings_.size() != n) {
    json_strings_.resize(n);
    have_string_.resize(n, 0);
  }
  static const std::string empty = "\"\"";
  if (id < 0 || static_cast<size_t>(id) >= n) return empty;
  auto i = static_cast<size_t>(id);
  if (!have_string_[i]) {
    append_json_string(json_strings_[i], r_.strings()[i]);
    have_string_[i] = 1;
  }
  return json_strings_[i];
}

const std::string& ExportModel::json_value(int64_t id) {
  size_t n = r_.strings().size();
  if (json_values_.size() != n) {
    json_values_.resize(n);
    have_value_.resize(n, 0);
  }
  static const std::string empty = "\"\"";
  if (id < 0 || static_cast<size_t>(id) >= n) return empty;
  auto i = static_cast<size_t>(id);
  if (!have_value_[i]) {
    const std::string& s = r_.strings()[i];
    if (is_embeddable_json(s)) json_values_[i] = s;
    else append_json_string(json_values_[i], s);
    have_value_[i] = 1;
  }
  return json_values_[i];
}

uint64_t ExportModel::flow_id(int64_t pid, int64_t correlation) const {
  // One process keeps Kineto's plain correlation ids; several need a prefix.
  if (processes_.size() <= 1) return static_cast<uint64_t>(correlation);
  auto it = process_index_.find(pid);
  uint64_t index = it == process_index_.end() ? processes_.size() : static_cast<uint64_t>(it->second);
  return ((index + 1) << 40) | (static_cast<uint64_t>(correlation) & ((uint64_t{1} << 40) - 1));
}

int64_t ExportModel::context_device(int64_t pid, int64_t context) {
  if (!context_loaded_) {
    context_loaded_ = true;
    for (const char* t : {"kernel", "memcpy", "memset"}) {
      auto q = r_.query("SELECT DISTINCT pid, context, device FROM " + std::string(t) + where_pid());
      while (q.step()) context_device_.emplace(std::make_pair(q.int64(0), q.int64(1)), q.int64(2));
    }
  }
  auto it = context_device_.find({pid, context});
  return it == context_device_.end() ? 0 : it->second;
}

std::pair<int64_t, int64_t> ExportModel::distributed() const {
  if (dist_) return *dist_;
  int64_t rank = 0, world = static_cast<int64_t>(std::max<size_t>(processes_.size(), 1));
  if (!processes_.empty()) {
    if (processes_[0].rank != INT64_MIN) rank = processes_[0].rank;
    if (processes_[0].world_size != INT64_MIN) world = processes_[0].world_size;
  }
  return {rank, world};
}

int64_t ExportModel::sm_count(int64_t device) const {
  for (const auto& d : devices_)
    if (d.id == device) return d.sm_count;
  return 0;
}

void ExportModel::load_correlations(unsigned parts) {
  parts &= ~corr_loaded_;
  corr_loaded_ |= parts;
  // Rows with a NULL key never matched the joins these scans replace.
  if (parts & kExternalIds) {
    auto x = r_.query("SELECT pid, correlation, external_id FROM external_correlation WHERE pid IS NOT NULL AND "
                      "correlation IS NOT NULL AND external_id IS NOT NULL" + and_pid());
    while (x.step()) {
      auto& e = corr_.upsert(x.int64(0), x.int64(1));
      e.has_external = true;
      e.external_id = x.int64(2);
    }
  }
  if (parts & kGpuActivity) {
    for (const char* t : {"kernel", "memcpy", "memset"}) {
      auto g = r_.query("SELECT pid, correlation FROM " + std::string(t) +
                        " WHERE pid IS NOT NULL AND correlation != 0" + and_pid());
      while (g.step()) corr_.upsert(g.int64(0), g.int64(1)).gpu = true;
    }
  }
  if (parts & kApiCalls) {
    auto a = r_.query("SELECT pid, correlation FROM api_call WHERE pid IS NOT NULL AND correlation != 0" + and_pid());
    while (a.step()) corr_.upsert(a.int64(0), a.int64(1)).api = true;
  }
}

}  // namespace gpuscope::formats
