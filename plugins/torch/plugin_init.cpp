// libgpuscope_torch.so's entry points. The collector loads it once libtorch is
// in the process and calls gpuscope_plugin_init from its watcher thread.
#include <dlfcn.h>

#include <torch/csrc/api/include/torch/version.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <thread>

#include "build_info.h"
#include "common/settings.h"
#include "gpuscope/plugin.h"
#include "host.h"
#include "memory_reporter.h"
#include "op_callbacks.h"
#include "schema/meta_keys.h"

// Exported by libtorch_cpu (it backs torch.__config__.show()) but declared in
// no installed header. Weak, so a libtorch without it still loads the plugin.
namespace caffe2 {
const std::map<std::string, std::string>& GetBuildOptions() __attribute__((weak));
}

#ifndef GPUSCOPE_TORCH_BUILT_FOR
#define GPUSCOPE_TORCH_BUILT_FOR TORCH_VERSION
#endif

namespace gpuscope::torch_plugin {
namespace {

const gpuscope_host_api* g_host = nullptr;
std::atomic<bool> g_finished{false};

// Only a CUDA build of torch launches GPU work; its CUDA library is loaded
// together with libtorch_cpu, so it is there by the time we are.
bool torch_cuda_loaded() {
  for (const char* lib : {"libtorch_cuda.so", "libtorch_hip.so"}) {
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

void finish() {
  if (g_finished.exchange(true)) return;
  if (!g_host || !g_host->enabled()) return;
  // exit() runs thread_local destructors before atexit handlers, so the
  // calling thread's record buffer is already retired: write the last step
  // from a short-lived thread of its own.
  try {
    std::thread([] { step_tracker().finish(); }).join();
  } catch (...) {
  }
}

int init(const gpuscope_host_api* h) {
  if (!h || h->abi_version != GPUSCOPE_PLUGIN_ABI_VERSION || h->size < sizeof(gpuscope_host_api)) {
    if (h && h->emit_message)
      h->emit_message(GPUSCOPE_ERROR, "libgpuscope_torch.so: the collector speaks another plugin ABI version");
    return 1;
  }
  g_host = h;
  set_host(h);

  TorchBuild build;
  if (caffe2::GetBuildOptions) build = torch_build_from_options(caffe2::GetBuildOptions());
  const char* built_for = GPUSCOPE_TORCH_BUILT_FOR;
  if (build.known && !same_torch_release(built_for, build.version)) {
    h->emit_message(GPUSCOPE_ERROR, version_mismatch_message(built_for, build.version).c_str());
    return 1;
  }
  h->set_meta(gpuscope::meta_key::kTorchVersion.data(), build.known ? build.version.c_str() : built_for);
  h->set_meta(gpuscope::meta_key::kTorchCudaVersion.data(), build.cuda_version.empty() ? "none" : build.cuda_version.c_str());
  h->set_meta(gpuscope::meta_key::kTorchGitVersion.data(), build.git_version.empty() ? "unknown" : build.git_version.c_str());
  h->set_meta(gpuscope::meta_key::kTorchBuild.data(), build.summary.c_str());
  h->set_meta(gpuscope::meta_key::kTorchPluginBuiltFor.data(), built_for);

  memory_reporter_init();
  CallbackOptions options;
  using settings::Id;
  options.ops = settings::value<Id::kTorchOps>();
  options.shapes = options.ops && settings::value<Id::kTorchShapes>();
  options.external_ids = h->trace_enabled("cuda") && torch_cuda_loaded();
  options.push_external_ids = options.external_ids && settings::value<Id::kTorchExternalIds>();
  options.dataloader_ops = settings::value<Id::kTorchDataLoaderOps>();
  settings::Read<settings::OpSteps::Value> op_steps = settings::read<Id::kTorchOpSteps>();
  if (!op_steps.warning.empty()) {
    const std::string text = "libgpuscope_torch.so: " + op_steps.warning + "; ops recorded in every step";
    std::fprintf(stderr, "gpuscope: %s\n", text.c_str());
    h->emit_message(GPUSCOPE_WARNING, text.c_str());
  }
  // `record`'s "auto": ops by position need the kernels' API calls, so a torch
  // without CUDA records ops in every step.
  if (op_steps.value.automatic) op_steps.value = {false, options.external_ids ? 2u : 0u, options.external_ids ? 50u : 0u};
  options.op_steps = op_steps.value.steps;
  options.op_period = op_steps.value.period;
  h->set_meta(gpuscope::meta_key::kTorchOpSteps.data(), settings::OpSteps::format(op_steps.value).c_str());
  std::string why;
  if (!register_callbacks(options, why)) {
    h->emit_message(GPUSCOPE_ERROR, ("libgpuscope_torch.so: " + why).c_str());
    return 1;
  }
  // Registered after the collector's own exit hook, so it runs first and the
  // last step reaches the database before the writer stops.
  h->set_meta(gpuscope::meta_key::kTorchOpCallback.data(), registered_callback_handle() ? "registered" : "none");
  std::atexit(finish);
  return 0;
}

}  // namespace

namespace detail {
const gpuscope_host_api* g_host = nullptr;
}
void set_host(const gpuscope_host_api* h) { detail::g_host = h; }

}  // namespace gpuscope::torch_plugin

extern "C" __attribute__((visibility("default"))) int gpuscope_plugin_init(const gpuscope_host_api* host) {
  try {
    return gpuscope::torch_plugin::init(host);
  } catch (const std::exception& e) {
    if (host && host->emit_message)
      host->emit_message(GPUSCOPE_ERROR, (std::string("libgpuscope_torch.so: ") + e.what()).c_str());
  } catch (...) {
  }
  return 1;
}

extern "C" __attribute__((visibility("default"))) void gpuscope_plugin_set_traced(int on) {
  try {
    gpuscope::torch_plugin::set_ops_traced(on != 0);
  } catch (...) {
  }
}

// Op recording paused (1: callback off, 2: callback on, returning at once) or
// not (0), on top of the collector's schedule: for benchmarks that compare
// steps with and without ops in one process (bench/torch_plugin/ab_shim.py).
extern "C" __attribute__((visibility("default"))) void gpuscope_plugin_pause_ops(int mode) {
  try {
    gpuscope::torch_plugin::set_ops_paused(mode);
  } catch (...) {
  }
}

// The torch this plugin was built for, the version its init compares: `gpuscope
// doctor` loads the plugin into the user's python and asks.
extern "C" __attribute__((visibility("default"))) const char* gpuscope_plugin_built_for(void) {
  return GPUSCOPE_TORCH_BUILT_FOR;
}

extern "C" __attribute__((visibility("default"))) void gpuscope_plugin_shutdown(void) {
  gpuscope::torch_plugin::finish();
}
