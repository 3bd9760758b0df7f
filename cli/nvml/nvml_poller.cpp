#include "cli/nvml/nvml_poller.h"

#include <dlfcn.h>
#include <time.h>

#include <cctype>
#include <chrono>
#include <cstdio>

#include "trace_formats/common/error.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/sqlite.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::cli {

// The few NVML declarations used; NVML's header is not part of the toolkit image.
struct NvmlPoller::Api {
  struct Utilization { unsigned gpu, memory; };
  struct Memory { unsigned long long total, free, used; };
  using Device = void*;
  void* lib = nullptr;
  int (*shutdown)() = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  int (*power)(Device, unsigned*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  std::vector<Device> devices;
};

namespace {

constexpr auto kPeriod = std::chrono::milliseconds(100);
constexpr int kSamplesPerWrite = 10;  // one transaction a second
constexpr int kNvmlClockSm = 1;

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

template <class F> F symbol(void* lib, const char* name) { return reinterpret_cast<F>(dlsym(lib, name)); }

// "GPU-3a232c89-3c53-..." -> "3a232c893c53...", the form CUPTI's device rows use.
std::string plain_uuid(const char* nvml_uuid) {
  std::string s = nvml_uuid;
  if (s.rfind("GPU-", 0) == 0) s.erase(0, 4);
  std::string out;
  for (char c : s)
    if (std::isxdigit(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool NvmlPoller::start(const std::string& db_path, pid_t job_pid, Window window) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto init = symbol<int (*)()>(lib, "nvmlInit_v2");
  auto count = symbol<int (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
  auto handle = symbol<int (*)(unsigned, Api::Device*)>(lib, "nvmlDeviceGetHandleByIndex_v2");
  auto uuid = symbol<int (*)(Api::Device, char*, unsigned)>(lib, "nvmlDeviceGetUUID");
  unsigned n = 0;
  if (!init || !count || !handle || init() != 0) {
    dlclose(lib);
    return false;
  }
  auto* a = new Api;
  a->lib = lib;
  a->shutdown = symbol<int (*)()>(lib, "nvmlShutdown");
  a->utilization = symbol<int (*)(Api::Device, Api::Utilization*)>(lib, "nvmlDeviceGetUtilizationRates");
  a->memory = symbol<int (*)(Api::Device, Api::Memory*)>(lib, "nvmlDeviceGetMemoryInfo");
  a->power = symbol<int (*)(Api::Device, unsigned*)>(lib, "nvmlDeviceGetPowerUsage");
  a->clock = symbol<int (*)(Api::Device, int, unsigned*)>(lib, "nvmlDeviceGetClockInfo");
  if (count(&n) == 0) {
    for (unsigned i = 0; i < n; ++i) {
      Api::Device d = nullptr;
      if (handle(i, &d) != 0) continue;
      char text[96] = {};
      uuids_.push_back(uuid && uuid(d, text, sizeof text) == 0 ? plain_uuid(text) : std::string());
      a->devices.push_back(d);
    }
  }
  if (a->devices.empty()) {
    if (a->shutdown) a->shutdown();
    delete a;
    uuids_.clear();
    return false;
  }
  api_ = a;
  path_ = db_path;
  pid_ = job_pid;
  window_ = window;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
  return true;
}

void NvmlPoller::run() {
  auto next = std::chrono::steady_clock::now();
  int taken = 0;
  while (!stop_.load()) {
    take(monotonic_ns());
    if (++taken % kSamplesPerWrite == 0) write();
    next += kPeriod;
    std::this_thread::sleep_until(next);
  }
}

void NvmlPoller::take(int64_t now) {
  if (now < window_.start_ns || (window_.end_ns && now > window_.end_ns)) return;
  int64_t ts = now - window_.origin_ns;
  for (unsigned d = 0; d < api_->devices.size(); ++d) {
    Api::Device dev = api_->devices[d];
    Api::Utilization u{};
    if (api_->utilization && api_->utilization(dev, &u) == 0) pending_.push_back({d, "nvml_sm_util_pct", ts, double(u.gpu)});
    Api::Memory m{};
    if (api_->memory && api_->memory(dev, &m) == 0) pending_.push_back({d, "nvml_memory_used_bytes", ts, double(m.used)});
    unsigned mw = 0;
    if (api_->power && api_->power(dev, &mw) == 0) pending_.push_back({d, "nvml_power_w", ts, mw / 1000.0});
    unsigned mhz = 0;
    if (api_->clock && api_->clock(dev, kNvmlClockSm, &mhz) == 0) pending_.push_back({d, "nvml_sm_clock_mhz", ts, double(mhz)});
  }
}

// A busy database (the job's writers hold it) keeps the samples for the next try.
bool NvmlPoller::write() {
  if (pending_.empty()) return true;
  try {
    store::Writer w(path_);
    w.begin();
    for (const Sample& s : pending_) {
      store::CounterRow r;
      r.pid = pid_;
      r.device = s.device;
      r.name = s.name;
      r.ts = s.ts;
      r.value = s.value;
      w.add(r);
    }
    w.commit();
    pending_.clear();
    return true;
  } catch (const Error&) {
    return false;
  }
}

void renumber_nvml_counters(const std::string& db_path, int64_t pid, const std::vector<std::string>& uuids) {
  store::Connection db(db_path, store::Connection::Mode::kReadWrite);
  if (db.query_int("SELECT count(*) FROM device").value_or(0) == 0) return;
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("CREATE TEMP TABLE IF NOT EXISTS nvml_map(nvml INTEGER PRIMARY KEY, cuda INTEGER)");
    db.exec("DELETE FROM nvml_map");
    for (size_t i = 0; i < uuids.size(); ++i) {
      const std::string& u = uuids[i];
      bool hex = !u.empty();
      for (char ch : u) hex = hex && std::isxdigit(static_cast<unsigned char>(ch));
      if (hex) db.exec("INSERT INTO nvml_map SELECT " + std::to_string(i) + ", id FROM device WHERE uuid = '" + u + "'");
    }
    const std::string mine = "pid = " + std::to_string(pid) +
                             " AND name_id IN (SELECT id FROM string WHERE value LIKE 'nvml\\_%' ESCAPE '\\')";
    db.exec("DELETE FROM counter WHERE " + mine + " AND device NOT IN (SELECT nvml FROM nvml_map)");
    db.exec("UPDATE counter SET device = (SELECT cuda FROM nvml_map WHERE nvml = counter.device) WHERE " + mine);
    db.exec("COMMIT");
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
}

void NvmlPoller::stop() {
  if (!api_) return;
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (!write()) std::fprintf(stderr, "gpuscope: %s: %zu NVML samples not written (database busy)\n", path_.c_str(), pending_.size());
  // Samples of a GPU the job did not use describe other work; without any device
  // row (CUPTI unavailable) they keep NVML's numbering.
  try {
    renumber_nvml_counters(path_, pid_, uuids_);
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuscope: %s: NVML samples keep NVML device indices: %s\n", path_.c_str(), e.what());
  }
  if (api_->shutdown) api_->shutdown();
  delete api_;
  api_ = nullptr;
}

}  // namespace gpuscope::cli
