// recompile: torch.compile compiling again in steady-state steps.
#include "analyzer/rules/rule_util.h"


namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "time compiling in analysed steps, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kRecompileRule = {
    "recompile",
    "torch.compile recompiles during training",
    "Compilation inside the analysed (post-warm-up) steps: ranges or ops whose names contain dynamo_timed, "
    "compile_inner, compile_fx, call_user_compiler, inductor compile or CompiledFunction compile, and, as "
    "torch 2.x records it without its own profiler, a `Torch-Compiled Region: F/N` op whose name is new "
    "(from the cache lookup that missed to the end of its first run, plus the next CompiledFunctionBackward, "
    "where the backward graph is compiled). With ops recorded in some steps only (`record`'s default), a graph "
    "counts only where its first run was recorded after a cache lookup and a pause of at least 5 ms; in a "
    "step whose ops were not recorded, a GPU idle gap of at least 5 ms in which the job loaded GPU code "
    "(cuModuleLoad*, cuLibraryLoad*: the new kernels) counts, in a job seen using torch.compile elsewhere. A "
    "recompile in steady state means a guard failed (a new shape, dtype, Python value) or a graph break re-traced "
    "code.",
    "Time spent compiling per step: it holds the training thread whether or not the GPU idles meanwhile "
    "(Inductor benchmarks kernel choices on the GPU), and a model that stopped recompiling runs cached code "
    "instead.",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto cause = static_cast<size_t>(IdleCause::kCompile);
  const int64_t idle = c.idle_by_cause[cause];
  // Compiling holds the training thread whether or not the GPU idles meanwhile
  // (Inductor benchmarks its kernel choices on it), so the saving is the time.
  IntervalSet compile = c.compiling.intersect(c.step_set);
  const int64_t t = compile.total();
  if (c.pct_of_step(t) < kMinSavingPct) return std::nullopt;
  Tally by;
  for (const auto& r : c.m.ranges)
    if (c.step_of(r.start) >= 0 && is_compile_range_name(c.m.str(r.name))) by.add(c.name(r.name), r.end - r.start, 1);
  for (uint32_t i : c.ops)
    if (is_compile_range_name(c.m.str(c.m.ops[i].name))) by.add(c.name(c.m.ops[i].name), c.m.ops[i].end - c.m.ops[i].start, 1);
  if (c.unseen_compile_ns > 0)
    by.add("GPU idle until new code loaded (cuModuleLoad*, cuLibraryLoad*), ops not recorded", c.unseen_compile_ns,
           static_cast<int64_t>(c.unseen_compile_steps));
  Finding f = make_finding(kRecompileRule, c, static_cast<double>(t));
  std::vector<int64_t> per_step(c.steps.size());
  int64_t steps_with = 0;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    per_step[i] = compile.covered(c.steps[i].start, c.steps[i].end);
    steps_with += per_step[i] > 0;
  }
  f.evidence.summary = "torch.compile spent " + ms(static_cast<double>(t) / 1e6) + " compiling in " +
                       std::to_string(steps_with) + " of " + std::to_string(c.steps.size()) +
                       " steady-state steps; the GPU idled " + ms(c.ms_per_step(idle)) + " per step meanwhile.";
  if (c.unseen_compile_ns > 0)
    f.evidence.summary += " " + ms(static_cast<double>(c.unseen_compile_ns) / 1e6) + " of it in " +
                          std::to_string(c.unseen_compile_steps) +
                          " step(s) whose ops were not recorded, seen as the GPU idling until new GPU code was loaded "
                          "(only the idle part counts there).";
  f.evidence.metrics = {
      {"compile_ms_total", static_cast<double>(t) / 1e6, "ms"},
      {"steps_with_compilation", static_cast<double>(steps_with), "count"},
      {"gpu_idle_compiling_ms_per_step", c.ms_per_step(idle), "ms"},
      {"unseen_compile_ms_total", static_cast<double>(c.unseen_compile_ns) / 1e6, "ms"},
  };
  f.evidence.top = by.top(5);
  f.evidence.ranges = worst_steps(c, per_step, 5, "compiling");
  f.fix.text = "Find the failing guard and make the varying input static or dynamic on purpose; keep "
               "per-step Python values out of compiled code.";
  f.fix.code =
      "torch._logging.set_logs(recompiles=True, graph_breaks=True)   # prints why it recompiles\n"
      "torch._dynamo.mark_dynamic(x, 0)            # a dimension that really varies\n"
      "model = torch.compile(model, dynamic=False)  # after padding inputs to fixed shapes\n"
      "# pass changing scalars as tensors: lr = torch.tensor(lr) instead of a Python float\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
