// channels-last: cuDNN converts NCHW tensors to NHWC and back around convolutions.
#include "analyzer/rules/rule_util.h"

#include <cctype>

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "layout-transpose kernel time, share of step time, to report"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kChannelsLastRule = {
    "channels-last",
    "Convolutions in NCHW pay for layout transposes",
    "cuDNN layout conversion kernels (nchwToNhwc, nhwcToNchw), and kernels launched by a convolution op whose "
    "name says transpose, convert, permute, nchw or nhwc, in steps that run convolutions: tensor-core "
    "convolutions want NHWC, so NCHW (contiguous) tensors are transposed before and after each one.",
    "The transpose kernels' time per step: in channels_last memory format they are not needed.",
    kThresholds,
    evaluate,
};

namespace {

// A kernel a convolution op launched to change the layout (cuDNN versions name them differently).
bool conv_layout_kernel(const Context& c, const KernelRec& k, const KernelClass& kc) {
  if (kc.has(kLayoutTranspose)) return true;
  if (kc.has(kMatmul)) return false;
  const uint32_t op = c.op_of_corr(k.corr);
  if (op == kNone || c.m.str(c.m.ops[op].name).find("conv") == std::string_view::npos) return false;
  std::string n(c.m.str(k.name).substr(0, 300));
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* w : {"transpose", "convert", "permute", "nchw", "nhwc"})
    if (n.find(w) != std::string::npos) return true;
  return false;
}

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  int64_t transpose = 0, conv = 0, n = 0, nconv = 0;
  Tally by;
  std::vector<int64_t> per_step(c.steps.size());
  TimeRange longest;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    const KernelClass& kc = c.kc(k.name);
    if (kc.has(kConvolution)) {
      conv += k.dur;
      ++nconv;
    }
    if (!conv_layout_kernel(c, k, kc)) continue;
    transpose += k.dur;
    ++n;
    uint32_t op = c.user_op(c.op_of_corr(k.corr));
    std::string label = short_kernel_name(c.m.str(k.name));
    by.add(label, k.dur, 1, op == kNone ? "" : "from " + c.op_name(op) + " " + op_inputs(c, op));
    if (int s = c.step_of(k.start); s >= 0) per_step[static_cast<size_t>(s)] += k.dur;
    if (k.dur > longest.end_ns - longest.start_ns) longest = {k.start, k.end(), "longest layout transpose"};
  }
  if (nconv == 0 || n == 0 || c.pct_of_step(transpose) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kChannelsLastRule, c, static_cast<double>(transpose));
  f.evidence.summary = num(static_cast<double>(n) / c.n_steps, 1) + " NCHW<->NHWC transposes per step take " +
                       ms(c.ms_per_step(transpose)) + " per step around " + num(static_cast<double>(nconv) / c.n_steps, 1) +
                       " convolution kernels (" + ms(c.ms_per_step(conv)) + " per step).";
  f.evidence.metrics = {
      {"transpose_ms_per_step", c.ms_per_step(transpose), "ms"},
      {"transposes_per_step", static_cast<double>(n) / c.n_steps, "count"},
      {"convolution_ms_per_step", c.ms_per_step(conv), "ms"},
      {"convolutions_per_step", static_cast<double>(nconv) / c.n_steps, "count"},
  };
  f.evidence.top = by.top(5);
  if (longest.end_ns > longest.start_ns) f.evidence.ranges.push_back(longest);
  auto worst = worst_steps(c, per_step, 3, "in layout transposes");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Keep the model and its inputs in channels_last memory format, so cuDNN runs NHWC kernels directly.";
  f.fix.code =
      "model = model.to(device=\"cuda\", memory_format=torch.channels_last)\n"
      "for x, y in loader:\n"
      "    x = x.to(\"cuda\", non_blocking=True).contiguous(memory_format=torch.channels_last)\n"
      "    with torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
      "        loss = loss_fn(model(x), y)\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
