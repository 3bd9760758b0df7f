// Finds plugins and loads each once the library it extends is in the process.
// The torch plugin is looked for in the order of common/plugin_cache.h:
// GPUSCOPE_TORCH_PLUGIN, the entry `gpuscope setup torch` built in the per-user
// cache for the version of the torch loaded, then next to the collector. Python imports torch long after start-up, so a
// small watcher thread polls for the library (dlopen RTLD_NOLOAD) instead of
// interposing dlopen, which would change whose RUNPATH the loader searches.
#include "collector/plugin_host.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "collector/collector.h"
#include "collector/cupti_locate.h"
#include "collector/cupti_source.h"
#include "collector/emit.h"
#include "collector/ondemand.h"
#include "collector/graph_steps.h"
#include "collector/schedule.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/settings.h"
#include "gpuscope/plugin.h"
#include "trace_formats/schema/enums.h"

namespace gpuscope::collector {
namespace {

struct PluginSpec {
  const char* target;   // soname whose presence triggers the load
  const char* file;     // plugin file next to the collector
  settings::Id env;     // overrides the plugin path
  const char* source;   // --trace source that enables it
  std::atomic<bool> done{false};
};

PluginSpec g_plugins[] = {
    {"libtorch_cpu.so", plugin_cache::kTorchPluginFile, settings::Id::kTorchPlugin, "torch"},
};

std::mutex g_load_mutex;
// The loaded plugins' gpuscope_plugin_shutdown, under g_load_mutex.
std::vector<gpuscope_plugin_shutdown_fn> g_shutdowns;

// On demand the plugin keeps reporting steps while nothing is recorded: the
// collector counts them (and its emitters drop the rest at one relaxed load).
int host_enabled() { return enabled() || ondemand::counting() ? 1 : 0; }
uint64_t host_now() { return now_ns(); }

int host_trace_enabled(const char* source) {
  const Config& c = config();
  std::string s = source ? source : "";
  return (s == "cuda" && c.cuda) || (s == "nvtx" && c.nvtx) || (s == "memory" && c.memory) ||
         (s == "torch" && c.torch) || (s == "nvml" && c.nvml);
}

void host_emit_op(const gpuscope_op* op) {
  if (op) emit_op(*op);
}

void host_emit_range(uint64_t start, uint64_t end, uint32_t source, uint32_t depth, const char* name,
                     uint32_t len) {
  emit_range(start, end, source, depth, {name ? name : "", name ? len : 0u});
}

void host_emit_step(uint64_t start, uint64_t end, int64_t number, uint32_t source) {
  emit_step(start, end, number, source);
  graph_steps::on_plugin_step(number);
}

void host_emit_memory(uint64_t ts, int32_t device, uint32_t op, uint64_t address, int64_t bytes,
                      int64_t total_allocated, int64_t total_reserved) {
  MemoryRecord r{};
  r.ts = ts;
  r.device = device;
  r.op = static_cast<uint8_t>(op);
  r.source = schema::memory_source::torch_allocator;
  r.address = address;
  r.bytes = bytes;
  r.total_allocated = total_allocated;
  r.total_reserved = total_reserved;
  emit_memory(r);
}

void host_emit_counter(uint64_t ts, int32_t device, const char* name, double value) {
  emit_counter(ts, device, name ? name : "", value);
}

// Messages a plugin emits while its init runs (under g_load_mutex): the last
// one is why it declined, if it did.
std::atomic<bool> g_in_init{false};
std::string g_declined_why;

void host_emit_message(uint32_t severity, const char* text) {
  if (g_in_init.load() && text) g_declined_why = text;
  emit_message(now_ns(), severity, text ? text : "");
}

void host_set_meta(const char* key, const char* value) {
  emit_meta(key ? key : "", value ? value : "");
  if (config().on_demand) ondemand::remember_meta(key ? key : "", value ? value : "");
}

void host_push_external_id(uint64_t id) {
  // Ops pushed on any thread, their stacks kept by CUPTI: a teardown on the
  // job's thread could race those calls and would lose the stacks.
  static std::atomic<bool> pushing{false};
  if (!pushing.load(std::memory_order_relaxed) && !pushing.exchange(true)) cupti_source::forbid_teardown();
  if (cupti_source::live())
    cupti_source::api().push_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void host_pop_external_id() {
  uint64_t last = 0;
  if (cupti_source::live())
    cupti_source::api().pop_external_id(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

int host_step_boundary(uint64_t now) { return schedule::on_step_boundary(config(), now) ? 1 : 0; }

const gpuscope_host_api g_host = {
    GPUSCOPE_PLUGIN_ABI_VERSION, sizeof(gpuscope_host_api), host_enabled, host_now, host_trace_enabled,
    host_emit_op, host_emit_range, host_emit_step, host_emit_memory, host_emit_counter, host_emit_message,
    host_set_meta, host_push_external_id, host_pop_external_id, host_step_boundary,
};

std::string collector_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&collector_dir), &info) || !info.dli_fname) return ".";
  std::string p = info.dli_fname;
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

bool wanted(const PluginSpec& spec) {
  return settings::value<settings::Id::kTrace>().has(spec.source);
}

// The first candidate that exists (the torch plugin's order, the only plugin
// there is); empty when none does, with `why_none` saying what to run when the
// job's torch is known and the plugin cache has nothing for it.
std::string plugin_path(const PluginSpec& spec, std::string& why_none) {
  const char* env = settings::text(spec.env);
  const std::string version = env ? "" : plugin_cache::torch_version_of_libraries(loaded_libraries());
  const std::string cache = env ? "" : plugin_cache::cache_dir();
  for (const auto& c : plugin_cache::torch_plugin_candidates(env ? env : "", cache, version, collector_dir()))
    if (access(c.path.c_str(), R_OK) == 0) return c.path;
  if (!version.empty() && !cache.empty()) {
    std::string others;
    for (const auto& v : plugin_cache::cached_torch_versions(cache)) others += (others.empty() ? "" : ", ") + v;
    why_none = "no torch plugin for torch " + version + " (" + plugin_cache::torch_root(cache) +
               (others.empty() ? " has none" : " has one for torch " + others + " only") +
               "): run `gpuscope setup torch`";
  }
  return {};
}

void load(PluginSpec& spec) {
  spec.done.store(true);
  std::string why_none;
  const std::string path = plugin_path(spec, why_none);
  if (path.empty()) {
    // A build without the plugin, or a torch gpuscope cannot name, says nothing.
    if (why_none.empty()) return;
    ensure_started();
    std::fprintf(stderr, "gpuscope: %s; recording without torch ops\n", why_none.c_str());
    emit_message(now_ns(), GPUSCOPE_WARNING, why_none);
    return;
  }
  ensure_started();
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::string why =
        path + " not loaded (built for another torch? `gpuscope setup torch` builds one for it): " + dlerror();
    std::fprintf(stderr, "gpuscope: %s; recording without it\n", why.c_str());
    emit_message(now_ns(), schema::severity::warning, why);
    return;
  }
  auto init = reinterpret_cast<gpuscope_plugin_init_fn>(dlsym(lib, "gpuscope_plugin_init"));
  if (!init) {
    emit_message(now_ns(), schema::severity::warning, std::string(spec.file) + " has no gpuscope_plugin_init");
    return;
  }
  g_declined_why.clear();
  g_in_init.store(true);
  int rc = init(&g_host);
  g_in_init.store(false);
  if (rc == 0) {
    schedule::expect_steps(reinterpret_cast<gpuscope_plugin_set_traced_fn>(dlsym(lib, "gpuscope_plugin_set_traced")));
    if (auto shutdown = reinterpret_cast<gpuscope_plugin_shutdown_fn>(dlsym(lib, "gpuscope_plugin_shutdown")))
      g_shutdowns.push_back(shutdown);
  }
  // The plugin says why through emit_message; repeat that one line here.
  if (rc != 0)
    std::fprintf(stderr, "gpuscope: %s declined to load: %s; recording without it\n", path.c_str(),
                 g_declined_why.empty() ? "no reason given" : g_declined_why.c_str());
}

bool all_done() {
  for (auto& p : g_plugins)
    if (!p.done.load()) return false;
  return true;
}

bool is_python() {
  char exe[512] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  const char* base = std::strrchr(exe, '/');
  return std::strstr(base ? base : exe, "python") != nullptr;
}

}  // namespace

void shutdown_plugins() {
  std::vector<gpuscope_plugin_shutdown_fn> shutdowns;
  {
    std::lock_guard lock(g_load_mutex);
    shutdowns.swap(g_shutdowns);
  }
  for (auto shutdown : shutdowns) shutdown();
}

void load_plugins_if_ready() {
  std::lock_guard lock(g_load_mutex);
  for (auto& spec : g_plugins) {
    if (spec.done.load() || !wanted(spec)) continue;
    void* target = dlopen(spec.target, RTLD_NOW | RTLD_NOLOAD);
    if (!target) continue;
    dlclose(target);
    load(spec);
  }
}

void start_plugin_watcher() {
  bool any_target = false;
  for (auto& spec : g_plugins) {
    if (!wanted(spec)) {
      spec.done.store(true);
      continue;
    }
    if (void* t = dlopen(spec.target, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(t);
      any_target = true;
    }
  }
  if (all_done() || (!any_target && !is_python())) return;
  // Not from this constructor: the collector's own static initializers run
  // after it. A program linked against the target starts its first ops right
  // after start-up, so its first poll comes after 1 ms, not 20.
  std::thread([first_wait_us = any_target ? 1000 : 20000] {
    usleep(first_wait_us);
    load_plugins_if_ready();
    while (!all_done()) {
      usleep(20000);
      load_plugins_if_ready();
    }
  }).detach();
}

}  // namespace gpuscope::collector
