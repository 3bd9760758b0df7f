// What a kernel is, as the what-if fixes see it: finer than names.h's classes
// where a fix treats kernels apart (GEMM precision, convolutions against their
// layout transposes, each kind of normalization, RNN, optimizer).
#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "analyzer/names.h"
#include "analyzer/whatif/step_graph.h"

namespace gpuscope::analyzer::whatif {
namespace {

template <size_t N>
bool has_any(const std::string& n, const std::array<std::string_view, N>& parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return n.find(p) != std::string::npos; });
}

bool has(const std::string& n, std::string_view p) { return n.find(p) != std::string::npos; }

std::string lower(std::string_view s) {
  std::string out(s.substr(0, 400));
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kOther: return "other";
    case Kind::kGemmFp32: return "gemm_fp32";
    case Kind::kGemmTf32: return "gemm_tf32";
    case Kind::kGemmHalf: return "gemm_half";
    case Kind::kConv: return "conv";
    case Kind::kConvHalf: return "conv_half";
    case Kind::kTranspose: return "transpose";
    case Kind::kBatchNorm: return "batch_norm";
    case Kind::kGroupNorm: return "group_norm";
    case Kind::kLayerNorm: return "layer_norm";
    case Kind::kMemoryBound: return "memory_bound";
    case Kind::kRnn: return "rnn";
    case Kind::kOptimizer: return "optimizer";
    case Kind::kFusedOptimizer: return "fused_optimizer";
    case Kind::kAttention: return "attention";
    case Kind::kTriton: return "triton";
    case Kind::kCommunication: return "communication";
    case Kind::kCopy: return "copy";
    case Kind::kMemset: return "memset";
  }
  return "other";
}

bool half_precision_name(std::string_view name) {
  static constexpr std::array<std::string_view, 10> half = {"bfloat16", "bf16", "c10::half", "__half", "f16",
                                                            "fp16", "h16816", "h1688", "e4m3", "fp8"};
  return has_any(lower(name), half);
}

Kind kind_of_kernel(std::string_view name) {
  const std::string n = lower(name);
  const KernelClass kc = classify_kernel(name);
  if (kc.has(kCommunication)) return Kind::kCommunication;
  if (kc.origin == Origin::kTriton) return Kind::kTriton;
  if (has(n, "multi_tensor_apply") || has(n, "fused_adam") || has(n, "fusedadam"))
    return has(n, "fused") ? Kind::kFusedOptimizer : Kind::kOptimizer;
  if (kc.has(kLayoutTranspose)) return Kind::kTranspose;
  static constexpr std::array<std::string_view, 6> rnn = {"lstm", "rnn_", "_rnn", "elemwisernn", "gru_", "persist"};
  if (has_any(n, rnn)) return Kind::kRnn;
  static constexpr std::array<std::string_view, 3> bn = {"cudnn::bn_", "batch_norm", "batchnorm"};
  if (has_any(n, bn)) return Kind::kBatchNorm;
  static constexpr std::array<std::string_view, 6> gn = {"group_norm", "groupnorm", "rowwisemoments",
                                                         "computefusedparams", "compute1dbackwardfused",
                                                         "computeinternalgradients"};
  if (has_any(n, gn)) return Kind::kGroupNorm;
  static constexpr std::array<std::string_view, 3> ln = {"layer_norm", "layernorm", "gammabetabackward"};
  if (has_any(n, ln)) return Kind::kLayerNorm;
  static constexpr std::array<std::string_view, 5> attention = {"fmha", "flash_fwd", "flash_bwd", "attention",
                                                                "sdpa"};
  if (has_any(n, attention)) return Kind::kAttention;
  if (kc.has(kMatmul)) {
    const bool half = half_precision_name(n) && !has(n, "tf32f32_tf32f32") && !has(n, "f32f32_f32f32");
    if (kc.has(kConvolution) || has(n, "implicit_gemm") || has(n, "implicit_convolve")) return half ? Kind::kConvHalf : Kind::kConv;
    if (kc.has(kFp32Simt)) return Kind::kGemmFp32;
    if (kc.has(kTensorCore)) return half ? Kind::kGemmHalf : Kind::kGemmTf32;
    return half ? Kind::kGemmHalf : Kind::kGemmFp32;
  }
  if (kc.has(kMemoryBound) || kc.has(kElementwise) || kc.origin == Origin::kAten) return Kind::kMemoryBound;
  return Kind::kOther;
}

}  // namespace gpuscope::analyzer::whatif
