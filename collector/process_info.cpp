#include "collector/process_info.h"

#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>

#include "collector/clock.h"

namespace gpuscope::collector {
namespace {

int64_t env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return store::kNull;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return *end ? store::kNull : x;
}

// torchrun gives every worker of a job the same run id (--rdzv-id, "none" by
// default) and the same rendezvous store (MASTER_ADDR:MASTER_PORT, a free port
// per --standalone job); SLURM_JOB_ID separates jobs on fixed ports.
std::string job_key_from_environment() {
  std::string key;
  for (const char* name : {"TORCHELASTIC_RUN_ID", "MASTER_ADDR", "MASTER_PORT", "SLURM_JOB_ID"}) {
    const char* v = std::getenv(name);
    if (!v || !*v) continue;
    if (!key.empty()) key += ' ';
    key += std::string(name) + "=" + v;
  }
  // MASTER_ADDR alone, or SLURM_JOB_ID alone, is set in shells that start no job.
  const bool job = std::getenv("WORLD_SIZE") != nullptr;
  return job ? key : std::string();
}

}  // namespace

ProcessInfo read_process_info() {
  ProcessInfo info;
  auto& r = info.row;
  r.pid = getpid();
  r.parent_pid = getppid();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  r.host = host;
  char exe[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) r.exe.assign(exe, static_cast<size_t>(n));
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  r.cmdline = cmd;
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  r.start_utc_ns = int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  info.start_ns = now_ns();
  r.rank = env_int("RANK");
  r.local_rank = env_int("LOCAL_RANK");
  r.world_size = env_int("WORLD_SIZE");
  info.job_key = job_key_from_environment();
  return info;
}

namespace {
std::mutex g_status_mutex;
std::string g_cupti_status = "not used: the process did not initialize CUDA";
}  // namespace

void set_cupti_status(const std::string& status) {
  std::lock_guard lock(g_status_mutex);
  g_cupti_status = status;
}

std::string cupti_status() {
  std::lock_guard lock(g_status_mutex);
  return g_cupti_status;
}

}  // namespace gpuscope::collector
