// amp: fp32 matmuls and convolutions running on CUDA cores instead of tensor cores.
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {
namespace {

constexpr double kMinSavingPct = 2.0;
// bf16 tensor-core GEMMs against fp32 CUDA-core GEMMs; an H100/H200 has ~15x
// the peak, real layers at training sizes gain 3-8x, so the estimate stays low.
constexpr double kAmpSpeedup = 4.0;
// bf16 against TF32 tensor cores: twice the peak, but the layers around them
// (batch norm, activations) gain less, and measured on the H200 a TF32 ResNet-50
// saved a third of its TF32 convolution time under bf16 autocast.
constexpr double kTf32Speedup = 1.5;

constexpr Threshold kThresholds[] = {
    {"kMinSavingPct", kMinSavingPct, "%", "estimated saving, share of step time, to report"},
    {"kAmpSpeedup", kAmpSpeedup, "x", "assumed speedup of an fp32 CUDA-core matmul/conv moved to bf16 tensor cores"},
    {"kTf32Speedup", kTf32Speedup, "x", "assumed speedup of a TF32 tensor-core matmul/conv moved to bf16"},
};

std::optional<Finding> evaluate(const RuleInput& in);

}  // namespace

extern const Rule kAmpRule = {
    "amp",
    "fp32 matmuls and convolutions could run in bf16",
    "GEMM and convolution kernels that run in fp32 on CUDA cores: names with sgemm, ffma, simt, gemmSN, gemv, "
    "f32f32_f32f32_f32, nvjet_s..., or a matmul kernel whose launching op had float inputs and whose name "
    "shows no tensor-core or TF32 variant; and TF32 tensor-core kernels (tf32 or tensorop_s1688 in the name, or a "
    "tensor-core matmul whose launching op had float inputs and whose name shows no 16- or 8-bit type).",
    "fp32 matmul/conv kernel time per step x (1 - 1/kAmpSpeedup) + TF32 matmul/conv kernel time x (1 - 1/kTf32Speedup).",
    kThresholds,
    evaluate,
};

namespace {

bool float_inputs(const Context& c, uint32_t op) {
  if (op == kNone || c.m.ops[op].dtypes == kNone) return false;
  std::string_view d = c.m.str(c.m.ops[op].dtypes);
  return d.starts_with("[\"float\"");
}

bool contains_any(std::string_view name, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words)
    if (name.find(w) != std::string_view::npos) return true;
  return false;
}

// A tensor-core matmul kernel running TF32: fp32 data, bf16 would be faster.
bool tf32_kernel(const Context& c, const KernelRec& k, uint32_t op) {
  const std::string_view name = c.m.str(k.name).substr(0, 300);
  if (contains_any(name, {"tf32", "tensorop_s1688", "tensorop_s16816"})) return true;
  if (contains_any(name, {"bf16", "bfloat16", "f16", "fp16", "half", "fp8", "e4m3", "e5m2", "int8", "h1688",
                          "h16816", "hmma"}))
    return false;
  return float_inputs(c, op);
}

std::optional<Finding> evaluate(const RuleInput& in) {
  const Context& c = in.ctx;
  int64_t fp32 = 0, tf32 = 0, matmul = 0, all = 0;
  int64_t count = 0, tf32_count = 0;
  Tally kernels;
  std::vector<int64_t> per_step(c.steps.size());
  TimeRange longest;
  for (uint32_t i : c.kernels) {
    const KernelRec& k = c.m.kernels[i];
    const KernelClass& kc = c.kc(k.name);
    all += k.dur;
    if (!kc.has(kMatmul)) continue;
    matmul += k.dur;
    if (kc.has(kFp64)) continue;
    uint32_t op = c.op_of_corr(k.corr);
    if (kc.has(kTensorCore)) {
      if (!tf32_kernel(c, k, op)) continue;
      tf32 += k.dur;
      ++tf32_count;
    } else {
      if (!kc.has(kFp32Simt) && !float_inputs(c, op)) continue;
      fp32 += k.dur;
      ++count;
    }
    uint32_t uop = c.user_op(op);
    std::string detail = origin_name(kc.origin);
    if (uop != kNone) detail += ", from " + c.op_name(uop) + " " + op_inputs(c, uop);
    kernels.add(short_kernel_name(c.m.str(k.name)), k.dur, 1, detail);
    if (int s = c.step_of(k.start); s >= 0) per_step[static_cast<size_t>(s)] += k.dur;
    if (k.dur > longest.end_ns - longest.start_ns) longest = {k.start, k.end(), "longest fp32 matmul kernel"};
  }
  const double saving = static_cast<double>(fp32) * (1.0 - 1.0 / kAmpSpeedup) +
                        static_cast<double>(tf32) * (1.0 - 1.0 / kTf32Speedup);
  if (c.pct_of_step(static_cast<int64_t>(saving)) < kMinSavingPct) return std::nullopt;
  Finding f = make_finding(kAmpRule, c, saving);
  const double share = all > 0 ? 100.0 * static_cast<double>(fp32) / static_cast<double>(all) : 0;
  const double tf32_share = all > 0 ? 100.0 * static_cast<double>(tf32) / static_cast<double>(all) : 0;
  f.evidence.summary =
      fp32 > 0 ? ms(c.ms_per_step(fp32)) + " per step (" + pct(share) + " of GPU kernel time) goes to " +
                     format_fixed(static_cast<double>(count) / c.n_steps, 1) +
                     " fp32 matmul/convolution kernels per step that run on CUDA cores, not tensor cores"
               : std::string();
  if (tf32 > 0)
    f.evidence.summary += std::string(fp32 > 0 ? "; " : "") + ms(c.ms_per_step(tf32)) + " per step (" +
                          pct(tf32_share) + " of GPU kernel time) to " +
                          format_fixed(static_cast<double>(tf32_count) / c.n_steps, 1) +
                          " TF32 tensor-core matmul/convolution kernels per step, which bf16 runs faster";
  f.evidence.summary += ".";
  f.evidence.metrics = {
      {"fp32_matmul_ms_per_step", c.ms_per_step(fp32), "ms"},
      {"fp32_matmul_kernels_per_step", static_cast<double>(count) / c.n_steps, "count"},
      {"fp32_matmul_share_of_kernel_time_pct", share, "%"},
      {"tf32_matmul_ms_per_step", c.ms_per_step(tf32), "ms"},
      {"matmul_ms_per_step", c.ms_per_step(matmul), "ms"},
      {"tensor_core_share_pct", 100.0 * in.analysis.summary.tensor_core_share, "%"},
      {"assumed_speedup", kAmpSpeedup, "x"},
  };
  f.evidence.top = kernels.top(5);
  if (longest.end_ns > longest.start_ns) f.evidence.ranges.push_back(longest);
  auto worst = worst_steps(c, per_step, 3, "in fp32 matmuls");
  f.evidence.ranges.insert(f.evidence.ranges.end(), worst.begin(), worst.end());
  f.fix.text = "Run the forward pass and loss under autocast to bfloat16, so matmuls and convolutions use "
               "bf16 tensor cores (bf16 needs no loss scaling). If fp32 must stay, allowing TF32 gets part of the "
               "gain for fp32 kernels.";
  f.fix.code =
      "with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
      "    output = model(x)\n"
      "    loss = loss_fn(output, y)\n"
      "loss.backward()\n"
      "optimizer.step()\n"
      "\n"
      "# or, keeping fp32 weights and activations, TF32 tensor cores:\n"
      "torch.backends.cuda.matmul.allow_tf32 = True\n"
      "torch.backends.cudnn.allow_tf32 = True\n";
  return f;
}

}  // namespace
}  // namespace gpuscope::analyzer
