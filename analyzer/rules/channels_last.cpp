// channels-last: cuDNN converts NCHW tensors to NHWC and back around convolutions.
#include "analyzer/rules/rule_util.h"

#include <cctype>

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 1.0;
// cuDNN's batch norm on NCHW tensors (bn_fw_*, bn_bw_* kernels) against its
// NHWC semi-persistent kernels: measured on the H200 in a fp32 ResNet-50, the
// NHWC ones took about half the time.
constexpr double kNchwBatchNormSpeedup = 2.0;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kNchwBatchNormSpeedup", kNchwBatchNormSpeedup, "x",
     "assumed speedup of cuDNN batch norm when the tensors are NHWC instead of NCHW"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kChannelsLastRule = {
    "channels-last",
    "Convolutions in NCHW pay for layout transposes",
    "cuDNN layout conversion kernels (nchwToNhwc, nhwcToNchw), and kernels launched by a convolution op whose "
    "name says transpose, convert, permute, nchw or nhwc, in steps that run convolutions: tensor-core "
    "convolutions want NHWC, so NCHW (contiguous) tensors are transposed before and after each one.",
    "The transpose kernels' time per step (in channels_last memory format they are not needed), plus cuDNN's NCHW "
    "batch-norm kernel time x (1 - 1/kNchwBatchNormSpeedup).",
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

// cuDNN batch norm on NCHW tensors: bn_fw_tr_1C11_kernel_NCHW, bn_bw_1C11_kernel_new, ...
bool nchw_batch_norm_kernel(std::string_view name) {
  name = name.substr(0, 200);
  const bool cudnn_bn = name.find("cudnn::bn_fw") != std::string_view::npos ||
                        name.find("cudnn::bn_bw") != std::string_view::npos;
  return cudnn_bn && name.find("nhwc") == std::string_view::npos && name.find("NHWC") == std::string_view::npos;
}

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  int64_t transpose = 0, conv = 0, n = 0, nconv = 0, batch_norm = 0;
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
    if (nchw_batch_norm_kernel(c.m.str(k.name))) batch_norm += k.dur;
    if (!conv_layout_kernel(c, k, kc)) continue;
    transpose += k.dur;
    ++n;
    uint32_t op = c.user_op(c.op_of_corr(k.corr));
    std::string label = short_kernel_name(c.m.str(k.name));
    by.add(label, k.dur, 1, op == kNone ? "" : "from " + c.op_name(op) + " " + op_inputs(c, op));
    if (int s = c.step_of(k.start); s >= 0) per_step[static_cast<size_t>(s)] += k.dur;
    if (k.dur > longest.end_ns - longest.start_ns) longest = {k.start, k.end(), "longest layout transpose"};
  }
  const double saving = static_cast<double>(transpose) + static_cast<double>(batch_norm) * (1 - 1 / kNchwBatchNormSpeedup);
  if (nconv == 0 || n == 0 || c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kChannelsLastRule, c, saving);
  f.evidence.summary = format_fixed(static_cast<double>(n) / c.n_steps, 1) + " NCHW<->NHWC transposes per step take " +
                       ms(c.ms_per_step(transpose)) + " per step around " + format_fixed(static_cast<double>(nconv) / c.n_steps, 1) +
                       " convolution kernels (" + ms(c.ms_per_step(conv)) + " per step)" +
                       (batch_norm > 0 ? ", and cuDNN's NCHW batch norm takes " + ms(c.ms_per_step(batch_norm)) +
                                             " per step, about twice its NHWC kernels"
                                       : std::string()) +
                       ".";
  f.evidence.metrics = {
      {"transpose_ms_per_step", c.ms_per_step(transpose), "ms"},
      {"transposes_per_step", static_cast<double>(n) / c.n_steps, "count"},
      {"convolution_ms_per_step", c.ms_per_step(conv), "ms"},
      {"convolutions_per_step", static_cast<double>(nconv) / c.n_steps, "count"},
      {"nchw_batch_norm_ms_per_step", c.ms_per_step(batch_norm), "ms"},
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
