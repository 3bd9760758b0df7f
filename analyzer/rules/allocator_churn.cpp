// allocator-churn: cudaMalloc/cudaFree in steady-state steps.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;
constexpr double kMinCallsPerStep = 1.0;
constexpr double kPressureFraction = 0.90;  // above it memory-pressure reports the same calls

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "GPU idle in allocator calls, share of step time, to report"},
    {"kMinCallsPerStep", kMinCallsPerStep, "calls", "cudaMalloc/cudaFree-family calls per analysed step, at least"},
    {"kPressureFraction", kPressureFraction, "of capacity", "peak memory above which memory-pressure reports instead"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kAllocatorChurnRule = {
    "allocator-churn",
    "Memory is allocated and freed through CUDA every step",
    "cudaMalloc/cudaFree-family API calls (cuMemAlloc, cuMemFree, cudaHostAlloc, cuMemCreate/Map, ...) inside "
    "steady-state steps, with peak memory below kPressureFraction. The caching allocator should serve a steady "
    "loop without them; torch.cuda.empty_cache(), changing shapes or PYTORCH_NO_CUDA_MEMORY_CACHING cause them.",
    "GPU idle time while the CPU is inside allocator calls per step (cudaFree synchronizes the device).",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const MemorySummary& mem = in.analysis.memory;
  if (mem.capacity > 0 && mem.peak_fraction >= kPressureFraction) return std::nullopt;
  int64_t calls = 0, frees = 0, api_ns = 0;
  Tally by;
  for (uint32_t i : c.apis) {
    const ApiRec& a = c.m.apis[i];
    if (!api_is_allocator(a.cls)) continue;
    ++calls;
    frees += a.cls == ApiClass::kFree;
    api_ns += a.dur;
    std::string op = user_op_name(c, a.corr);
    by.add(c.name(a.name) + (op.empty() ? "" : " from " + op), a.dur, 1);
  }
  const auto cause = static_cast<size_t>(IdleCause::kAllocator);
  const int64_t idle = c.idle_by_cause[cause];
  if (static_cast<double>(calls) / c.n_steps < kMinCallsPerStep || c.pct_of_step(idle) < kMinSavingPct)
    return std::nullopt;
  Finding f = make_finding(kAllocatorChurnRule, c, static_cast<double>(idle));
  f.evidence.summary = format_fixed(static_cast<double>(calls) / c.n_steps, 1) + " allocator calls per step (" +
                       format_fixed(static_cast<double>(frees) / c.n_steps, 1) + " frees) take " + ms(c.ms_per_step(api_ns)) +
                       " of CPU per step; the GPU idled " + ms(c.ms_per_step(idle)) + " per step meanwhile.";
  f.evidence.metrics = {
      {"allocator_calls_per_step", static_cast<double>(calls) / c.n_steps, "count"},
      {"free_calls_per_step", static_cast<double>(frees) / c.n_steps, "count"},
      {"allocator_api_ms_per_step", c.ms_per_step(api_ns), "ms"},
      {"gpu_idle_in_allocator_ms_per_step", c.ms_per_step(idle), "ms"},
      {"peak_fraction_pct", 100 * mem.peak_fraction, "%"},
  };
  f.evidence.top = by.top(5);
  for (const Gap& g : c.largest[cause]) {
    std::string what = g.blocker == kNone ? "allocator call" : c.name(c.m.apis[g.blocker].name);
    f.evidence.ranges.push_back(gap_range(g, "GPU idle in " + what + ": " + ns_text(static_cast<double>(g.length()))));
    if (f.evidence.ranges.size() >= 5) break;
  }
  f.fix.text = "Let the caching allocator reuse its blocks: remove torch.cuda.empty_cache() (and gc-driven frees) "
               "from the loop, keep tensor shapes steady (pad to a few bucket sizes), allocate persistent buffers once.";
  f.fix.code =
      "for x, y in loader:\n"
      "    loss = train_step(x, y)\n"
      "    # torch.cuda.empty_cache()   # remove: it cudaFree()s the cache, next step cudaMalloc()s it again\n"
      "\n"
      "# variable shapes: pad to a few sizes so cached blocks fit again\n"
      "x = torch.nn.functional.pad(x, (0, bucket_len - x.shape[-1]))\n"
      "\n"
      "# environment: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
