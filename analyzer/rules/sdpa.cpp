// sdpa: attention written out as matmul -> softmax -> matmul.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;
constexpr double kMaxKernelsBetween = 3;  // masking, scaling or dropout kernels between the three
// Flash/memory-efficient attention against the unfused chain at training sizes.
constexpr double kSdpaSpeedup = 3.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kMaxKernelsBetween", kMaxKernelsBetween, "kernels", "other kernels allowed between matmul, softmax and matmul"},
    {"kSdpaSpeedup", kSdpaSpeedup, "x", "assumed speedup of fused attention over the unfused kernels it replaces"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kSdpaRule = {
    "sdpa",
    "Attention runs as separate matmul, softmax and matmul kernels",
    "On one stream, a matmul kernel, a softmax kernel (not log-softmax) and a matmul kernel with at most "
    "kMaxKernelsBetween other kernels between them; in backward, a softmax-backward kernel with matmuls on both "
    "sides. The S x S attention matrix is written to and read from memory several times.",
    "The pattern's kernel time per step x (1 - 1/kSdpaSpeedup).",
    kThresholds,
    evaluate,
};

namespace {

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  const auto gap = static_cast<size_t>(kMaxKernelsBetween);
  int64_t time = 0, patterns = 0;
  Tally by;
  std::vector<int64_t> per_step(c.steps.size());
  TimeRange biggest;
  int64_t biggest_t = 0;
  for (const auto& stream_kernels : c.kernels_by_stream) {
    const auto& list = stream_kernels.second;  // a plain reference: lambdas may capture it (C++20 clang 14)
    auto is = [&](size_t j, KernelFlag fl) { return c.kc(c.m.kernels[list[j]].name).has(fl); };
    size_t covered_until = 0;  // kernels already counted in a pattern
    for (size_t s = 0; s < list.size(); ++s) {
      const bool fwd = is(s, kSoftmaxForward), bwd = is(s, kSoftmaxBackward);
      if (!fwd && !bwd) continue;
      // Nearest matmul before and after the softmax, within the window.
      size_t lo = s, hi = s;
      for (size_t d = 1; d <= gap + 1 && d <= s; ++d)
        if (is(s - d, kMatmul)) {
          lo = s - d;
          break;
        }
      for (size_t d = 1; d <= gap + 1 && s + d < list.size(); ++d)
        if (is(s + d, kMatmul)) {
          hi = s + d;
          break;
        }
      if (lo == s || hi == s) continue;
      lo = std::max(lo, covered_until);
      int64_t t = 0;
      for (size_t j = lo; j <= hi; ++j) t += c.m.kernels[list[j]].dur;
      covered_until = hi + 1;
      time += t;
      ++patterns;
      const KernelRec& sm = c.m.kernels[list[s]];
      uint32_t op = c.user_op(c.op_of_corr(sm.corr));
      by.add(std::string(fwd ? "forward" : "backward") + ": " + short_kernel_name(c.m.str(sm.name)), t, 1,
             op == kNone ? "" : "softmax from " + c.op_name(op) + " " + op_inputs(c, op));
      const KernelRec& first = c.m.kernels[list[lo]];
      if (int st = c.step_of(first.start); st >= 0) per_step[static_cast<size_t>(st)] += t;
      if (t > biggest_t) {
        biggest_t = t;
        biggest = {first.start, c.m.kernels[list[hi]].end(), std::string("unfused attention (") + (fwd ? "forward" : "backward") + ")"};
      }
    }
  }
  const double saving = static_cast<double>(time) * (1.0 - 1.0 / kSdpaSpeedup);
  if (patterns == 0 || c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kSdpaRule, c, saving);
  f.evidence.summary = format_fixed(static_cast<double>(patterns) / c.n_steps, 1) +
                       " matmul-softmax-matmul sequences per step take " + ms(c.ms_per_step(time)) +
                       " per step; a fused attention kernel never writes the attention matrix to memory.";
  f.evidence.metrics = {
      {"attention_patterns_per_step", static_cast<double>(patterns) / c.n_steps, "count"},
      {"unfused_attention_ms_per_step", c.ms_per_step(time), "ms"},
      {"assumed_speedup", kSdpaSpeedup, "x"},
  };
  f.evidence.top = by.top(5);
  if (biggest_t > 0) f.evidence.ranges.push_back(biggest);
  auto worst = worst_steps(c, per_step, 3, "in unfused attention");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Call torch.nn.functional.scaled_dot_product_attention: it dispatches to FlashAttention or "
               "memory-efficient attention kernels that fuse the whole computation, forward and backward.";
  f.fix.code =
      "import torch.nn.functional as F\n"
      "# q, k, v: (batch, heads, seq, head_dim)\n"
      "out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p if self.training else 0.0,\n"
      "                                     is_causal=causal)\n"
      "# replaces:\n"
      "#   scores = (q @ k.transpose(-2, -1)) * scale\n"
      "#   out = scores.softmax(dim=-1) @ v\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
