#include "memory_reporter.h"

#include <c10/core/Allocator.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/settings.h"
#include "host.h"

namespace gpuscope::torch_plugin {
namespace {

namespace prof = torch::profiler::impl;

// The totals are int64_t in torch 1.13 and size_t in 2.x; take whatever the
// base class declares so one source overrides both.
template <class F>
struct ReportArgs;
template <class C, class R, class Ptr, class Size, class Total, class Dev>
struct ReportArgs<R (C::*)(Ptr, Size, Total, Total, Dev)> {
  using TotalBytes = Total;
};
using TotalBytes = ReportArgs<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::TotalBytes;

// torch reads whatever sits in the PROFILER_STATE slot as a ProfilerStateBase
// (a static_cast, in 1.13 and 2.x alike), so the reporter must be one: a
// profiler whose config says "disabled". torch.profiler then sees no profiler
// running, pushes its own state on top while it records and pops it after,
// and our reporter takes over again.
class Reporter final : public prof::ProfilerStateBase {
 public:
  explicit Reporter(bool cpu) : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::Disabled)), cpu_(cpu) {}

  void reportMemoryUsage(void* ptr, int64_t alloc_size, TotalBytes total_allocated, TotalBytes total_reserved,
                         c10::Device device) override {
    const gpuscope_host_api* h = host();
    if (!h || !h->enabled() || alloc_size == 0) return;
    if (device.is_cpu() && !cpu_) return;
    h->emit_memory(h->now_ns(), device.is_cpu() ? -1 : device.index(),
                   alloc_size > 0 ? GPUSCOPE_MEMORY_ALLOC : GPUSCOPE_MEMORY_FREE,
                   reinterpret_cast<uintptr_t>(ptr), alloc_size > 0 ? alloc_size : -alloc_size,
                   static_cast<int64_t>(total_allocated), static_cast<int64_t>(total_reserved));
  }

  void reportOutOfMemory(int64_t alloc_size, TotalBytes total_allocated, TotalBytes total_reserved,
                         c10::Device device) override {
    const gpuscope_host_api* h = host();
    if (!h || !h->enabled()) return;
    int device_index = device.is_cpu() ? -1 : device.index();
    char text[256];
    std::snprintf(text, sizeof text,
                  "torch out of memory on %s device %d: tried to allocate %lld bytes with %lld allocated "
                  "and %lld reserved",
                  device.is_cpu() ? "cpu" : "cuda", device_index, static_cast<long long>(alloc_size),
                  static_cast<long long>(total_allocated), static_cast<long long>(total_reserved));
    uint64_t now = h->now_ns();
    h->emit_message(GPUSCOPE_ERROR, text);
    h->emit_counter(now, device_index, "torch_oom_requested_bytes", static_cast<double>(alloc_size));
  }

  // Only the CPU allocator asks this; the CUDA caching allocator reports always.
  bool memoryProfilingEnabled() const override { return cpu_; }

  prof::ActiveProfilerType profilerType() override { return prof::ActiveProfilerType::NONE; }

 private:
  bool cpu_;
};

bool g_on = false;
std::shared_ptr<Reporter> g_reporter;
uint32_t g_steps_per_stretch = 0;    // GPUSCOPE_TORCH_MEMORY_STEPS; 0: every step
uint32_t g_steps_left = 0;           // under the ops switch lock
std::atomic<bool> g_active{true};    // read by every top-level op start

}  // namespace

void memory_reporter_init() {
  g_on = settings::value<settings::Id::kTorchMemory>();
  if (g_on) g_reporter = std::make_shared<Reporter>(settings::value<settings::Id::kTorchCpuMemory>());
  g_steps_per_stretch = settings::value<settings::Id::kTorchMemorySteps>();
  g_steps_left = g_steps_per_stretch;
  g_active.store(true, std::memory_order_relaxed);
}

void memory_reporter_stretch_started() {
  g_steps_left = g_steps_per_stretch;
  g_active.store(true, std::memory_order_relaxed);
}

void memory_reporter_step_ended() {
  if (g_steps_per_stretch == 0 || g_steps_left == 0) return;
  if (--g_steps_left == 0) g_active.store(false, std::memory_order_relaxed);
}

void memory_reporter_enter(MemoryScope& scope) {
  if (!g_on || !g_active.load(std::memory_order_relaxed)) return;
  std::shared_ptr<c10::ThreadLocalDebugInfo> current = c10::ThreadLocalDebugInfo::current();
  if (scope.cached_node && current == scope.cached_parent) {
    // A node is immutable (kind, info, parent), so installing the one made
    // last time is the same as pushing a new one. Its parent chain had no
    // PROFILER_STATE when it was made and cannot have gained one since, so
    // the slot check below is not needed again.
    c10::ThreadLocalDebugInfo::_forceCurrentDebugInfo(scope.cached_node);
  } else {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) return;
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, g_reporter);
    scope.cached_parent = current;
    scope.cached_node = c10::ThreadLocalDebugInfo::current();
  }
  scope.saved = std::move(current);
  scope.pushed = true;
}

void memory_reporter_exit(MemoryScope& scope) {
  if (!scope.pushed) return;
  scope.pushed = false;
  c10::ThreadLocalDebugInfo::_forceCurrentDebugInfo(scope.saved);
  scope.saved.reset();
}

}  // namespace gpuscope::torch_plugin
