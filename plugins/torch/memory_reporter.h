// The caching allocator's events, through the hook torch.profiler uses:
// allocators call c10::reportMemoryUsageToProfiler (and, on CUDA
// out-of-memory, reportOutOfMemoryToProfiler), which forward to the
// MemoryReportingInfoBase found in the thread's PROFILER_STATE debug info.
// Ours sits there only while a top-level op runs: torch.profiler refuses to
// start on a thread whose slot is taken, and users start it between ops.
// So allocations (which happen inside ops) are all seen, and frees done
// outside any op (Python dropping its last reference) are not.
#pragma once

#include <c10/util/ThreadLocalDebugInfo.h>

#include <memory>

namespace gpuscope::torch_plugin {

// Reads GPUSCOPE_TORCH_MEMORY (0 turns the hook off),
// GPUSCOPE_TORCH_CPU_MEMORY (1 also asks the CPU allocator to report) and
// GPUSCOPE_TORCH_MEMORY_STEPS (default 2).
void memory_reporter_init();

// Every report costs the job (about 120 ns per allocation on the CPU,
// bench/torch_plugin/callback_cost.cpp), and a steady-state step allocates
// what the step before did. So the hook is on for the first
// GPUSCOPE_TORCH_MEMORY_STEPS steps of each traced stretch only (0: every
// step). Both are called at step boundaries and stretch starts, under the
// plugin's ops switch lock.
void memory_reporter_stretch_started();
void memory_reporter_step_ended();

// Per thread: what a top-level op's start changed, for its end to undo, and
// the debug-info node it installed, reused while the thread's state below it
// stays the same (it nearly always does), which saves an allocation per op.
struct MemoryScope {
  std::shared_ptr<c10::ThreadLocalDebugInfo> saved;
  std::shared_ptr<c10::ThreadLocalDebugInfo> cached_parent;
  std::shared_ptr<c10::ThreadLocalDebugInfo> cached_node;
  bool pushed = false;
};

// At the start of a top-level op: installs the reporter on this thread unless
// the slot is taken (torch.profiler recording). At its end: restores.
void memory_reporter_enter(MemoryScope& scope);
void memory_reporter_exit(MemoryScope& scope);

}  // namespace gpuscope::torch_plugin
