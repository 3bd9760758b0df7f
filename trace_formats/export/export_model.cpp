#include "trace_formats/export/export_model.h"

#include "trace_formats/common/text.h"
#include "trace_formats/export/json_text.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/cursor.h"

namespace gpuscope::formats {

using namespace store::rec;  // the row structs of records.h: Kernel, Op, Step, ...

namespace {

// Calls mark(pid, correlation) for each row of R with a pid and a correlation
// other than 0.
template <class R, class F>
void mark_correlations(store::Connection& db, const std::string& and_pid, F&& mark) {
  store::Cursor<R> q(db, {R::kPid, R::kCorrelation}, "WHERE pid IS NOT NULL AND correlation != 0" + and_pid);
  while (q.next()) mark(q->pid, q->correlation);
}

}  // namespace

ExportModel::ExportModel(store::Reader& reader, std::optional<int64_t> only_pid)
    : r_(reader), only_pid_(only_pid) {
  // Exports read every table once plus point look-ups of correlations: a
  // larger page cache and memory-mapped reads keep those off the syscall path.
  r_.db().exec("PRAGMA cache_size=-131072; PRAGMA mmap_size=1073741824;");
  store::Cursor<Process> p(r_.db(),
                           {Process::kPid, Process::kHost, Process::kExe, Process::kCmdline, Process::kRank,
                            Process::kWorldSize, Process::kStartUtcNs},
                           where_pid() + " ORDER BY pid");
  while (p.next()) {
    ProcessInfo info;
    info.pid = p->pid_or_zero();
    info.host = p->host;
    info.exe = p->exe;
    info.cmdline = p->cmdline;
    info.rank = p->rank;  // kNull (INT64_MIN) when unranked
    info.world_size = p->world_size;
    info.start_utc_ns = p->start_utc_ns_or_zero();
    info.index = static_cast<int>(processes_.size());
    process_index_[info.pid] = info.index;
    processes_.push_back(std::move(info));
  }
  store::Cursor<Thread> t(r_.db(), {Thread::kPid, Thread::kTid, Thread::kName}, where_pid() + " ORDER BY pid, tid");
  while (t.next()) threads_.push_back({t->pid_or_zero(), t->tid_or_zero(), std::string(t->name)});
  auto d = store::Cursor<Device>::all(r_.db(), "ORDER BY id");
  while (d.next()) {
    DeviceInfo info;
    info.id = d->id_or_zero();
    info.name = d->name;
    info.uuid = d->uuid;
    info.sm_count = d->sm_count_or_zero();
    info.total_memory = d->total_memory_or_zero();
    info.compute_major = d->compute_major_or_zero();
    info.compute_minor = d->compute_minor_or_zero();
    info.memory_bandwidth = d->memory_bandwidth_or_zero();
    info.core_clock_khz = d->core_clock_khz_or_zero();
    devices_.push_back(std::move(info));
  }
  std::string utc = r_.meta(meta_key::kOriginUtcNs);
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
      const int pid_col = q.column("pid"), context_col = q.column("context"), device_col = q.column("device");
      while (q.step())
        context_device_.emplace(std::make_pair(q.int64(pid_col), q.int64(context_col)), q.int64(device_col));
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
    store::Cursor<ExternalCorrelation> x(
        r_.db(), {ExternalCorrelation::kPid, ExternalCorrelation::kCorrelation, ExternalCorrelation::kExternalId},
        "WHERE pid IS NOT NULL AND correlation IS NOT NULL AND external_id IS NOT NULL" + and_pid());
    while (x.next()) {
      auto& e = corr_.upsert(x->pid, x->correlation);
      e.has_external = true;
      e.external_id = x->external_id;
    }
  }
  if (parts & kGpuActivity) {
    auto gpu = [&](int64_t pid, int64_t corr) { corr_.upsert(pid, corr).gpu = true; };
    mark_correlations<Kernel>(r_.db(), and_pid(), gpu);
    mark_correlations<Memcpy>(r_.db(), and_pid(), gpu);
    mark_correlations<Memset>(r_.db(), and_pid(), gpu);
  }
  if (parts & kApiCalls) {
    auto api = [&](int64_t pid, int64_t corr) { corr_.upsert(pid, corr).api = true; };
    mark_correlations<ApiCall>(r_.db(), and_pid(), api);
  }
}

}  // namespace gpuscope::formats
