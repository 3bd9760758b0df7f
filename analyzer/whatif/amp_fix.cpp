// bf16 autocast as a graph transform (docs/rules.md, "What-if"): by the op
// that launched each kernel where ops were recorded (autocast.h), else by
// kernel kind. fixes.cpp lists it with the other fixes.
#include <algorithm>
#include <vector>

#include "analyzer/whatif/autocast.h"
#include "analyzer/whatif/fixes.h"

namespace gpuscope::analyzer::whatif {
namespace {

double us(double ns) { return ns / 1000; }

// A kernel's time in bf16, by its kind's curve at its own duration.
double bf16_ratio(GpuTask& k, const Calibration& cal, Bound b, bool& matmul) {
  const double t = us(k.dur);
  matmul = false;
  switch (k.kind) {
    case Kind::kGemmFp32: matmul = true; k.kind = Kind::kGemmHalf; return cal.ratio("gemm_fp32_to_bf16", t, b, 0.3);
    case Kind::kGemmTf32: matmul = true; k.kind = Kind::kGemmHalf; return cal.ratio("gemm_tf32_to_bf16", t, b, 0.6);
    case Kind::kConv: matmul = true; k.kind = Kind::kConvHalf; return cal.ratio("conv_fp32_to_bf16", t, b, 0.6);
    case Kind::kAttention: matmul = true; return cal.ratio("gemm_tf32_to_bf16", t, b, 0.6);
    case Kind::kBatchNorm: return cal.ratio("batchnorm_fp32_to_bf16", t, b, 1.0);
    case Kind::kGroupNorm: return cal.ratio("groupnorm_fp32_to_bf16", t, b, 1.0);
    case Kind::kLayerNorm: return cal.ratio("layernorm_fp32_to_bf16", t, b, 1.0);
    case Kind::kMemoryBound:
    case Kind::kTranspose: return cal.ratio("elementwise_fp32_to_bf16", t, b, 0.6);
    case Kind::kRnn: return cal.ratio("rnn_fp32_to_bf16", t, b, 1.0);
    default: return 1;
  }
}

// Without recorded ops: every kernel at its bf16 speed, autocast's CPU cost and
// two cast kernels per forward matmul (a third of matmul kernels).
void amp_by_kind(Graph& g, const Calibration& cal, Bound b) {
  const double autocast = cal.cost("autocast_op_cpu_us", 10, b) * 1e3;
  const double cast = cal.cost("cast_kernel_floor_us", 1.1, b) * 1e3;
  for (CpuTask& c : g.cpu) {
    bool any_matmul = false;
    for (uint32_t x = c.gpu_begin; x < c.gpu_end; ++x) {
      GpuTask& k = g.gpu[x];
      if (k.removed || k.optimizer || k.half) continue;
      bool matmul = false;
      k.dur *= bf16_ratio(k, cal, b, matmul);
      k.half = true;
      if (matmul) k.dur += cast * 2.0 / 3.0, any_matmul = true;
    }
    if (any_matmul && c.type == CpuType::kLaunch) c.gap += autocast / 3.0;
  }
}

// With ops: autocast as torch applies it (autocast.h). Ops on the lower-
// precision list run in bf16 and cast their fp32 inputs (a parameter once per
// forward, an activation when the op before left fp32), each cast paid again
// in backward (the gradient cast back); ops on the fp32 list keep their time
// and cast bf16 inputs up; other ops keep their inputs' dtype, carried from the
// op before (in backward, walked in reverse: the forward op's order); index,
// gather, scatter and embedding kernels keep their time whatever the dtype.
void amp_by_op(Graph& g, const Calibration& cal, Bound b) {
  const double autocast = cal.cost("autocast_op_cpu_us", 10, b) * 1e3;
  const double eager = cal.cost("eager_op_cpu_us", 10, b) * 1e3;
  const double floor = cal.cost("cast_kernel_floor_us", 1.1, b) * 1e3;
  const double per_mb = cal.cost("cast_kernel_us_per_mb", 0.52, b) * 1e3;
  auto cast_ns = [&](double elems) { return std::max(floor, elems * 4 / 1e6 * per_mb); };
  std::vector<uint8_t> half(g.gpu.size(), 0);
  // GPU and CPU time added at an op's first kernel: casts there and in backward.
  std::vector<double> extra_gpu(g.gpu.size(), 0), extra_cpu(g.gpu.size(), 0);
  auto walk = [&](bool backward) {
    bool bf16 = false;
    uint32_t step = UINT32_MAX, op = UINT32_MAX;
    const auto n = static_cast<int64_t>(g.gpu.size());
    for (int64_t i = backward ? n - 1 : 0; backward ? i >= 0 : i < n; i += backward ? -1 : 1) {
      const auto x = static_cast<uint32_t>(i);
      const GpuTask& k = g.gpu[x];
      if (k.removed || k.optimizer || k.backward != backward || k.half) continue;
      const uint32_t s = g.cpu[k.cpu].step;
      if (s != step) step = s, bf16 = false, op = UINT32_MAX;
      const bool first = k.op != op;
      op = k.op;
      switch (k.amp) {
        case AmpClass::kLower:
        case AmpClass::kRnn:
          if (first && !backward) {
            const double act = bf16 ? 0 : k.input_elems;
            const int casts = (k.param_elems > 0 ? 2 : 0) + (act > 0 ? 1 : 0);
            // The weight's cast by its size, the bias's at the floor; again in backward.
            if (k.param_elems > 0) extra_gpu[x] += 2 * (cast_ns(k.param_elems) + floor);
            if (act > 0) extra_gpu[x] += 2 * cast_ns(act);
            // Forward: autocast's dispatch and its casts (the calibration's tiny
            // Linear casts three tensors); backward: a ToCopyBackward node per cast.
            extra_cpu[x] += autocast + casts * eager;
          }
          half[x] = 1;
          bf16 = true;
          break;
        case AmpClass::kFp32:
          if (first && !backward && bf16 && k.input_elems > 0) {
            extra_gpu[x] += 2 * cast_ns(k.input_elems);
            extra_cpu[x] += autocast / 3 + eager;
          }
          bf16 = false;
          break;
        case AmpClass::kKeep: half[x] = bf16; break;
        case AmpClass::kNoSpeedup: break;
        case AmpClass::kUnknown: half[x] = bf16; break;
      }
    }
  };
  walk(false);
  walk(true);
  for (uint32_t x = 0; x < g.gpu.size(); ++x) {
    GpuTask& k = g.gpu[x];
    if (k.removed || k.optimizer || k.half) continue;
    if (half[x]) {
      bool matmul = false;
      k.dur *= bf16_ratio(k, cal, b, matmul);
      k.half = true;
    }
    k.dur += extra_gpu[x];
    if (extra_cpu[x] > 0 && g.cpu[k.cpu].type == CpuType::kLaunch) g.cpu[k.cpu].gap += extra_cpu[x];
  }
}

bool ops_known(const Graph& g) {
  size_t known = 0, all = 0;
  for (const GpuTask& k : g.gpu) {
    if (k.removed || k.optimizer || k.kind == Kind::kCopy || k.kind == Kind::kMemset) continue;
    ++all;
    known += k.amp != AmpClass::kUnknown;
  }
  return all > 0 && known >= all * 8 / 10;
}

// cuDNN runs bf16 convolutions in NHWC: on NCHW tensors it transposes around
// each one, a larger share of the (shorter) bf16 convolution's time than in
// fp32 (the calibration's transpose shares, measured over convolution shapes).
void nchw_bf16_transposes(Graph& g, const Graph& before, const Calibration& cal, Bound b) {
  const double fp32_share = cal.cost("conv_transpose_share_nchw_fp32", 0, b);
  const double bf16_share = cal.cost("conv_transpose_share_nchw_bf16", 0, b);
  double conv_after = 0, transposes_before = 0, transposes_after = 0;
  for (uint32_t x = 0; x < g.gpu.size(); ++x) {
    if (g.gpu[x].removed) continue;
    if (before.gpu[x].kind == Kind::kConv && g.gpu[x].kind == Kind::kConvHalf) conv_after += g.gpu[x].dur;
    if (g.gpu[x].kind == Kind::kTranspose) transposes_before += before.gpu[x].dur, transposes_after += g.gpu[x].dur;
  }
  if (conv_after <= 0 || bf16_share <= 0 || fp32_share <= 0 || transposes_before <= 0) return;
  // The recorded transposes are the fp32 share; they become the bf16 share of the new convolutions.
  const double wanted = bf16_share * conv_after;
  if (transposes_after <= 0 || wanted <= transposes_after) return;
  const double scale = wanted / transposes_after;
  for (GpuTask& k : g.gpu)
    if (!k.removed && k.kind == Kind::kTranspose) k.dur *= scale;
}

}  // namespace

void amp_apply(Graph& g, const JobTraits& t, const Calibration& cal, Bound b) {
  const Graph before = t.has_convolutions && !t.channels_last ? g : Graph{};
  if (ops_known(g))
    amp_by_op(g, cal, b);
  else
    amp_by_kind(g, cal, b);
  if (!before.gpu.empty()) nchw_bf16_transposes(g, before, cal, b);
}

}  // namespace gpuscope::analyzer::whatif
