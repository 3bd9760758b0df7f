// memory-pressure: peak memory close to the device's capacity.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

// Shared with allocator-churn, which stays silent above it.
constexpr double kPressureFraction = 0.90;

constexpr Threshold kThresholds[] = {
    {"kPressureFraction", kPressureFraction, "of capacity", "peak reserved (or device-used) memory that counts as pressure"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kMemoryPressureRule = {
    "memory-pressure",
    "Peak GPU memory is close to the device's capacity",
    "Peak memory reserved by the torch caching allocator (or in use through cudaMalloc) at or above "
    "kPressureFraction of the device's memory. Near the limit the allocator frees its cache and retries "
    "(cudaFree, a device synchronization, then cudaMalloc) and failed allocations appear.",
    "GPU idle time while the CPU is inside allocator calls (cudaMalloc/cudaFree) per step; 0 when the "
    "allocator never had to retry, which still leaves the out-of-memory risk.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const MemorySummary& mem = in.analysis.memory;
  if (mem.capacity <= 0 || mem.peak_fraction < kPressureFraction) return std::nullopt;
  const auto cause = static_cast<size_t>(IdleCause::kAllocator);
  const int64_t idle = c.idle_by_cause[cause];
  Finding f = make_finding(kMemoryPressureRule, c, static_cast<double>(idle));
  if (f.severity == Severity::kLow) f.severity = Severity::kMedium;  // an OOM away, whatever the time cost
  const double peak = static_cast<double>(std::max({mem.peak_reserved, mem.peak_allocated, mem.peak_device_used}));
  f.evidence.summary = "Peak memory reached " + format_bytes(peak) + " of " + format_bytes(static_cast<double>(mem.capacity)) +
                       " (" + pct(100 * mem.peak_fraction) + "); " + format_fixed(mem.allocs_per_step, 1) +
                       " cudaMalloc-level allocations per step and " + std::to_string(mem.failed_allocs) +
                       " failed allocations; the GPU idled " + ms(c.ms_per_step(idle)) + " per step in allocator calls.";
  f.evidence.metrics = {
      {"peak_fraction_pct", 100 * mem.peak_fraction, "%"},
      {"peak_reserved_bytes", static_cast<double>(mem.peak_reserved), "bytes"},
      {"peak_allocated_bytes", static_cast<double>(mem.peak_allocated), "bytes"},
      {"peak_device_used_bytes", static_cast<double>(mem.peak_device_used), "bytes"},
      {"capacity_bytes", static_cast<double>(mem.capacity), "bytes"},
      {"allocator_calls_per_step", mem.allocs_per_step, "count"},
      {"failed_allocations", static_cast<double>(mem.failed_allocs), "count"},
      {"gpu_idle_in_allocator_ms_per_step", c.ms_per_step(idle), "ms"},
  };
  Tally by;
  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    if (api_is_allocator(a.cls)) by.add(c.name(a.name), a.dur, 1, a.failed ? "some failed" : "");
  }
  f.evidence.top = by.top(5);
  int64_t peak_ts = -1;
  for (const auto& p : mem.timeline) {
    int64_t v = std::max({p.allocated, p.reserved, p.device_used});
    if (static_cast<double>(v) >= peak && peak_ts < 0) peak_ts = p.ts_ns;
  }
  if (peak_ts >= 0) f.evidence.ranges.push_back({peak_ts, peak_ts, "peak memory"});
  for (const Gap& g : c.largest[cause]) {
    f.evidence.ranges.push_back(gap_range(g, "GPU idle in allocator call: " + ns_text(static_cast<double>(g.length()))));
    if (f.evidence.ranges.size() >= 4) break;
  }
  f.fix.text = "Lower the peak: recompute activations in backward (activation checkpointing), keep activations in "
               "bf16 with autocast, or use a smaller micro-batch with gradient accumulation. "
               "expandable_segments reduces fragmentation retries.";
  f.fix.code =
      "from torch.utils.checkpoint import checkpoint\n"
      "x = checkpoint(block, x, use_reentrant=False)       # per block in forward()\n"
      "\n"
      "# or a smaller micro-batch, same effective batch:\n"
      "for i, (x, y) in enumerate(loader):\n"
      "    loss = loss_fn(model(x), y) / accum_steps\n"
      "    loss.backward()\n"
      "    if (i + 1) % accum_steps == 0:\n"
      "        optimizer.step()\n"
      "        optimizer.zero_grad(set_to_none=True)\n"
      "\n"
      "# environment: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
