// Entry points: the LD_PRELOAD constructor, CUDA's InitializeInjection and the
// exit and signal hooks. The constructor only prepares (sets the injection
// variables so CUDA and NVTX call us); recording starts on first use.
#include "collector/collector.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "collector/clock.h"
#include "collector/cupti_source.h"
#include "collector/emit.h"
#include "collector/ondemand.h"
#include "collector/ondemand_api.h"
#include "collector/plugin_host.h"
#include "collector/schedule.h"
#include "collector/writer_thread.h"
#include "trace_formats/common/settings.h"
#include "trace_formats/common/steps_window.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::collector {
namespace {

std::mutex g_init_mutex;  // start-up only, never on the hot path
bool g_started = false;
std::atomic<bool> g_forked_child{false};
pid_t g_owner_pid = 0;
Config g_config;

// gpuscope_attach(): the library was dlopen'ed into a running process, which
// is then on demand whatever its environment says.
std::atomic<bool> g_attach{false};

void on_fork_child() {
  // DataLoader workers and other forked children never record: the writer
  // thread did not survive the fork and the parent owns the database.
  g_enabled.store(false, std::memory_order_relaxed);
  g_forked_child.store(true, std::memory_order_relaxed);
  cupti_source::forget_in_child();
  ondemand::forget_in_child();
}

std::atomic<bool> g_exit_done{false};

// Runs at exit, possibly twice (registered at start and again once the writer
// runs; the later registration runs first, before the CUDA runtime's own exit
// handler unloads modules whose kernel names CUPTI records point into). CUPTI
// is flushed on this thread, as NVIDIA's injection sample does; the writer then
// drains without calling CUPTI.
void on_exit() {
  if (getpid() != g_owner_pid || g_exit_done.exchange(true)) return;
  shutdown_plugins();
  ondemand::end_at_exit();  // a capture under way ends with the job; its file stays readable
  g_enabled.store(false, std::memory_order_relaxed);
  cupti_source::flush(true);
  cupti_source::stop();
  if (!writer_thread::stop(10000))
    std::fprintf(stderr, "gpuscope: the writer did not finish within 10 s; the recording may miss its end\n");
}

void register_late_exit_hook() { std::atexit(on_exit); }

void print_crash_trace(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  const char msg[] = "gpuscope: crash trace (GPUSCOPE_CRASH_TRACE)\n";
  [[maybe_unused]] auto w = write(2, msg, sizeof msg - 1);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

void on_signal(int sig) {
  if (getpid() == g_owner_pid) {
    g_enabled.store(false, std::memory_order_relaxed);
    writer_thread::stop_from_signal(3000);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_signal_handlers() {
  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // the job's own
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

// A Python job keeps SIGINT for itself (KeyboardInterrupt), so on_signal is
// not installed for it; and when KeyboardInterrupt ends the job, Python ends
// by re-raising SIGINT with the default action once it has finalized, so no
// atexit handler runs and the open traced stretch would never be written.
// Python's own exit hook (Py_AtExit, run at the end of Py_FinalizeEx, before
// that signal and before atexit handlers) ends the recording there too.
void register_python_exit_hook() {
  using AtExit = int (*)(void (*)());
  using IsInitialized = int (*)();
  auto at_exit = reinterpret_cast<AtExit>(dlsym(RTLD_DEFAULT, "Py_AtExit"));
  auto initialized = reinterpret_cast<IsInitialized>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  if (at_exit && initialized && initialized()) at_exit(on_exit);
}

// On demand, CUPTI is subscribed at the first traced stretch of a capture,
// once CUDA has called InitializeInjection (schedule's cupti starter).
void start_cupti_late() {
  if (!ondemand::cuda_initialized() || cupti_source::active() || !g_config.cuda) return;
  std::string why;
  cupti_source::set_before_teardown([] { return writer_thread::decode_cupti_now(2000); });
  if (cupti_source::start(g_config, false, why)) {
    set_cupti_status("ok (on demand: subscribed during captures)");
  } else {
    set_cupti_status(why);
    std::fprintf(stderr, "gpuscope: GPU activity not recorded: %s; capturing CPU-side sources only\n", why.c_str());
    emit_message(now_ns(), gpuscope::schema::severity::warning, "GPU activity not recorded: " + why);
    g_config.cuda = false;
  }
}

std::string self_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&self_path), &info) && info.dli_fname) return info.dli_fname;
  return {};
}

// Neither LD_PRELOAD nor an injection variable names this library: the job
// dlopen'ed it itself (ondemand_api.h's gpuscope_attach) and decides when.
bool dlopened_by_the_job(const std::string& self) {
  const auto names_self = [&](const char* v) {
    if (!v) return false;
    const std::string base = self.substr(self.rfind('/') + 1);
    return std::strstr(v, self.c_str()) != nullptr || std::strstr(v, base.c_str()) != nullptr;
  };
  return !names_self(std::getenv("LD_PRELOAD")) && !names_self(std::getenv("CUDA_INJECTION64_PATH")) &&
         !names_self(std::getenv("NVTX_INJECTION64_PATH"));
}

}  // namespace

const Config& config() { return g_config; }

bool nvtx_wanted() {
  if (g_forked_child.load()) return false;
  return settings::value<settings::Id::kTrace>().nvtx;
}

void ensure_started() {
  if (g_forked_child.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(g_init_mutex);
  if (g_started) return;
  g_started = true;
  g_owner_pid = getpid();
  g_config = load_config();
  if (g_attach.load()) {
    g_config.on_demand = true;
    g_config.steps_window = false;
    if (!settings::is_set(settings::Id::kCuptiFinalize)) g_config.finalize_when_off = true;
  }
  schedule::begin(g_config, now_ns());
  if (g_config.on_demand) {
    // Dormant: no writer and nothing recorded until a capture (ondemand.h).
    set_cupti_status("on demand: CUPTI subscribed during captures only");
    cupti_source::wait_dormant();
    schedule::set_cupti_starter(start_cupti_late);
    ondemand::start(g_config, register_late_exit_hook);
  } else {
    writer_thread::start(g_config, register_late_exit_hook);
    g_enabled.store(true, std::memory_order_release);
  }
  install_signal_handlers();
  std::atexit(on_exit);
  register_python_exit_hook();
  if (settings::is_set(settings::Id::kCrashTrace))
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) signal(sig, print_crash_trace);
}

}  // namespace gpuscope::collector

using namespace gpuscope::collector;

__attribute__((constructor)) static void gpuscope_collector_loaded() {
  if (gpuscope::settings::is_set(gpuscope::settings::Id::kDisable)) return;
  pthread_atfork(nullptr, nullptr, on_fork_child);
  std::string self = self_path();
  if (!self.empty() && dlopened_by_the_job(self)) return;  // waits for gpuscope_attach()
  if (!self.empty()) {
    // LD_PRELOAD alone: ask NVTX and the CUDA driver to call our injection entry points.
    setenv("NVTX_INJECTION64_PATH", self.c_str(), 0);
    setenv("CUDA_INJECTION64_PATH", self.c_str(), 0);
  }
  if (gpuscope::settings::equals(gpuscope::settings::Id::kTraceSteps, gpuscope::kOnDemandSteps)) {
    // On demand without `gpuscope record` (LD_PRELOAD in a job spec): the torch
    // plugin set up as record sets it, ops linked to kernels when a capture is
    // finalized rather than pushed through CUPTI around every op, which would
    // keep CUPTI from being torn down after a capture. Here, while the process
    // is still single-threaded.
    setenv(gpuscope::settings::name(gpuscope::settings::Id::kTorchExternalIds), "0", 0);
    setenv(gpuscope::settings::name(gpuscope::settings::Id::kTorchOpSteps), "auto", 0);
  }
  start_plugin_watcher();
}

// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names us.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_forked_child.load() || gpuscope::settings::is_set(gpuscope::settings::Id::kDisable)) return 1;
  ensure_started();
  load_plugins_if_ready();
  if (config().on_demand) {
    ondemand::note_cuda_initialized();  // CUPTI waits for the first capture
    return 1;
  }
  if (!config().cuda) {
    set_cupti_status("off: --trace without cuda");
    return 1;
  }
  std::string why;
  cupti_source::set_before_teardown([] { return writer_thread::decode_cupti_now(2000); });
  if (cupti_source::start(config(), schedule::traced(), why)) {
    set_cupti_status("ok");
  } else {
    set_cupti_status(why);
    std::fprintf(stderr, "gpuscope: GPU activity not recorded: %s; recording CPU-side sources only\n",
                 why.c_str());
    emit_message(now_ns(), gpuscope::schema::severity::warning, "GPU activity not recorded: " + why);
  }
  return 1;
}

extern "C" __attribute__((visibility("default"))) int gpuscope_attach(void) {
  if (g_forked_child.load() || gpuscope::settings::is_set(gpuscope::settings::Id::kDisable)) return -1;
  g_attach.store(true);
  // As the constructor does on demand (the torch plugin reads them when it loads, below).
  setenv(gpuscope::settings::name(gpuscope::settings::Id::kTorchExternalIds), "0", 0);
  setenv(gpuscope::settings::name(gpuscope::settings::Id::kTorchOpSteps), "auto", 0);
  ensure_started();
  if (!config().on_demand) return -1;  // started earlier, recording this process otherwise
  // CUDA initialized before this library came: its InitializeInjection never ran.
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
    dlclose(cuda);
    ondemand::note_cuda_initialized();
  }
  load_plugins_if_ready();
  return 0;
}
