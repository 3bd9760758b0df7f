// Where the torch plugin's per-op time goes, in one process without the
// collector: at::add of two 4-float tensors, timed with
//   none       no RecordFunction callback
//   empty      a global callback that does nothing (what torch itself costs)
//   inputs     the same, asking for inputs (torch then boxes every op's arguments)
//   plugin     the plugin's callbacks, host emit functions doing nothing
//   no_memory  the same once GPUSCOPE_TORCH_MEMORY_STEPS's steps are used up: the
//              allocator hook (a PROFILER_STATE debug-info node per top-level op,
//              and with GPUSCOPE_TORCH_CPU_MEMORY=1 a report per allocation) off
// All callbacks are registered once and switched on one at a time; variants
// alternate round by round and the report takes medians of per-round
// differences, so a busy machine blurs them alike.
//   torch_plugin_callback_cost [ops_per_round] [rounds]
// GPUSCOPE_TORCH_SHAPES=0 measures the plugin without shapes and dtypes.
//
//   torch_plugin_callback_cost --bursts OPS N
// only times N bursts of OPS at::add calls (pausing 120 ms between bursts so
// the collector drains its ring) and prints "NS_PER_OP <median>": the worker
// op_overhead.py --cpp runs under `gpuscope record`, with the real collector.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "trace_formats/common/settings.h"
#include "gpuscope/plugin.h"
#include "plugins/torch/memory_reporter.h"
#include "plugins/torch/op_callbacks.h"

extern "C" int gpuscope_plugin_init(const gpuscope_host_api* host);

namespace {

int host_enabled() { return 1; }
uint64_t host_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}
int host_trace_enabled(const char*) { return 0; }
uint64_t g_sink = 0;  // keeps the emits from being optimized away
void host_emit_op(const gpuscope_op* op) { g_sink += op->name_len + op->shapes_len + op->dtypes_len; }
void host_emit_range(uint64_t, uint64_t, uint32_t, uint32_t, const char*, uint32_t) {}
void host_emit_step(uint64_t, uint64_t, int64_t, uint32_t) {}
void host_emit_memory(uint64_t, int32_t, uint32_t, uint64_t, int64_t, int64_t, int64_t) {}
void host_emit_counter(uint64_t, int32_t, const char*, double) {}
void host_emit_message(uint32_t, const char* text) { std::fprintf(stderr, "plugin: %s\n", text); }
void host_set_meta(const char*, const char*) {}
void host_push(uint64_t) {}
void host_pop() {}
int host_step_boundary(uint64_t) { return 1; }

const gpuscope_host_api kHost = {GPUSCOPE_PLUGIN_ABI_VERSION, sizeof(gpuscope_host_api), host_enabled, host_now,
                                 host_trace_enabled, host_emit_op, host_emit_range, host_emit_step,
                                 host_emit_memory, host_emit_counter, host_emit_message, host_set_meta, host_push,
                                 host_pop, host_step_boundary};

std::unique_ptr<at::ObserverContext> empty_start(const at::RecordFunction&) { return nullptr; }
void empty_end(const at::RecordFunction&, at::ObserverContext*) {}

double ns_per_op(const at::Tensor& x, const at::Tensor& y, int ops) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < ops; ++i) at::add(x, y);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / ops;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int bursts_only(int ops, int bursts) {
  at::set_num_threads(1);
  at::Tensor x = at::ones({4}), y = at::ones({4});
  ns_per_op(x, y, 2000);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the collector loads the plugin
  std::vector<double> t;
  for (int b = 0; b < bursts; ++b) {
    t.push_back(ns_per_op(x, y, ops));
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  std::printf("NS_PER_OP %.1f\n", median(t));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--bursts") return bursts_only(std::atoi(argv[2]), std::atoi(argv[3]));
  int ops = argc > 1 ? std::atoi(argv[1]) : 20000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 21;
  at::set_num_threads(1);
  at::Tensor x = at::ones({4}), y = at::ones({4});

  if (gpuscope_plugin_init(&kHost) != 0) return 1;
  namespace tp = gpuscope::torch_plugin;
  constexpr int kVariants = 5;
  const at::CallbackHandle plugin = tp::registered_callback_handle();
  at::CallbackHandle handles[kVariants] = {
      0, at::addGlobalCallback(at::RecordFunctionCallback(empty_start, empty_end)),
      at::addGlobalCallback(at::RecordFunctionCallback(empty_start, empty_end).needsInputs(true)), plugin, plugin};
  const char* names[kVariants] = {"none", "empty", "inputs", "plugin", "no_memory"};
  for (int v = 1; v < kVariants; ++v) at::disableCallback(handles[v]);
  ns_per_op(x, y, ops);  // warm up

  // The allocator hook goes off once the steps GPUSCOPE_TORCH_MEMORY_STEPS allows are
  // counted, and back on when a stretch starts (what the collector's schedule does).
  auto memory_hook = [](bool on) {
    if (on) {
      tp::memory_reporter_stretch_started();
    } else {
      for (int i = 0; i < 1000; ++i) tp::memory_reporter_step_ended();
    }
  };
  std::vector<double> t[kVariants];
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < kVariants; ++k) {
      int v = r % 2 ? kVariants - 1 - k : k;
      if (v == 4) memory_hook(false);
      if (handles[v]) at::reenableCallback(handles[v]);
      t[v].push_back(ns_per_op(x, y, ops));
      if (handles[v]) at::disableCallback(handles[v]);
      if (v == 4) memory_hook(true);
    }
  }
  auto diff = [&](int a, int b) {
    std::vector<double> d;
    for (int r = 0; r < rounds; ++r) d.push_back(t[a][r] - t[b][r]);
    return median(d);
  };
  const char* shapes = gpuscope::settings::raw(gpuscope::settings::Id::kTorchShapes);
  const char* cpu_memory = gpuscope::settings::raw(gpuscope::settings::Id::kTorchCpuMemory);
  std::printf("at::add of 4 floats, %d rounds of %d ops, medians (shapes %s, CPU memory %s)\n", rounds, ops,
              shapes ? shapes : "on", cpu_memory ? cpu_memory : "0");
  for (int v = 0; v < kVariants; ++v) std::printf("  %-9s %7.1f ns/op\n", names[v], median(t[v]));
  std::printf("  torch runs a callback:        %+7.1f ns/op (empty - none)\n", diff(1, 0));
  std::printf("  torch boxes the inputs:       %+7.1f ns/op (inputs - empty)\n", diff(2, 1));
  std::printf("  the plugin's own work:        %+7.1f ns/op (plugin - inputs)\n", diff(3, 2));
  std::printf("  the allocator hook:           %+7.1f ns/op (plugin - no_memory)\n", diff(3, 4));
  std::printf("  plugin in all:                %+7.1f ns/op (plugin - none)\n", diff(3, 0));
  return g_sink == 0;
}
