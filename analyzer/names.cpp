#include "analyzer/names.h"

#include <array>
#include <cctype>
#include <string>

namespace gpuscope::analyzer {
namespace {

std::string lower(std::string_view s) {
  // Kernel names can be very long templates; the heuristics only need the head and
  // the template arguments, which sit well within the first few kilobytes.
  s = s.substr(0, 4096);
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

template <size_t N>
bool has_any(const std::string& s, const std::array<std::string_view, N>& parts) {
  for (auto p : parts)
    if (has(s, p)) return true;
  return false;
}

bool starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Template argument `index` (0-based) of the first `<...>` after `at`, or "".
std::string_view template_arg(std::string_view s, size_t at, int index) {
  size_t open = s.find('<', at);
  if (open == std::string_view::npos) return {};
  int depth = 0, arg = 0;
  size_t begin = open + 1;
  for (size_t i = open + 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '<' || c == '(') ++depth;
    else if ((c == '>' || c == ')') && depth > 0) --depth;
    else if ((c == ',' || c == '>') && depth == 0) {
      if (arg == index) {
        std::string_view a = s.substr(begin, i - begin);
        while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
        while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
        return a;
      }
      if (c == '>') return {};
      ++arg;
      begin = i + 1;
    }
  }
  return {};
}

Origin origin_of(const std::string& n) {
  if (has(n, "nccl")) return Origin::kNccl;
  if (starts(n, "triton_") || has(n, " triton_") || has(n, "triton::")) return Origin::kTriton;
  // PyTorch's own kernels, even when built from CUTLASS templates (flash attention).
  static constexpr std::array<std::string_view, 5> aten_strong = {"at::", "c10::", "pytorch", "cunn_", "softmax_warp"};
  if (has_any(n, aten_strong)) return Origin::kAten;
  static constexpr std::array<std::string_view, 8> cudnn = {"cudnn", "nchwtonhwc", "nhwctonchw", "implicit_convolve",
                                                            "fprop", "dgrad", "wgrad", "winograd"};
  if (has_any(n, cudnn)) return Origin::kCudnn;
  static constexpr std::array<std::string_view, 9> cublas = {"cublas", "nvjet", "gemmsn", "gemv2", "gemmk1",
                                                             "splitkreduce", "xmma_gemm", "cutlass", "sgemm"};
  if (has_any(n, cublas) || starts(n, "ampere_") || starts(n, "volta_") || starts(n, "turing_") ||
      starts(n, "maxwell_") || starts(n, "hopper_"))
    return Origin::kCublas;
  static constexpr std::array<std::string_view, 6> aten = {"elementwise_kernel", "reduce_kernel", "fmha_", "flash_fwd",
                                                           "flash_bwd", "catarraybatchedcopy"};
  if (has_any(n, aten)) return Origin::kAten;
  return Origin::kUser;
}

// nvjet kernels (cuBLAS on Hopper and later) name their types after the prefix:
// nvjet_[sm90_]hsh_..., where the first letter is the input type (h half, b bf16,
// t tf32, e/q fp8, s fp32, d fp64). Returns 0 when there is no such code.
char nvjet_input_type(const std::string& n) {
  size_t p = n.find("nvjet_");
  if (p == std::string::npos) return 0;
  std::string_view rest = std::string_view(n).substr(p + 6);
  if (starts(rest, "sm") && rest.size() > 5 && rest[4] == '_') rest.remove_prefix(5);
  else if (starts(rest, "sm") && rest.size() > 6 && rest[5] == '_') rest.remove_prefix(6);
  if (rest.size() >= 4 && rest[3] == '_') return rest[0];
  return 0;
}

}  // namespace

const char* origin_name(Origin o) {
  switch (o) {
    case Origin::kCublas: return "cuBLAS";
    case Origin::kCudnn: return "cuDNN";
    case Origin::kAten: return "ATen";
    case Origin::kTriton: return "Triton";
    case Origin::kNccl: return "NCCL";
    case Origin::kUser: return "user";
  }
  return "user";
}

KernelClass classify_kernel(std::string_view raw) {
  const std::string n = lower(raw);
  KernelClass k;
  k.origin = origin_of(n);
  uint16_t f = 0;
  if (k.origin == Origin::kNccl) f |= kCommunication;

  static constexpr std::array<std::string_view, 17> matmul = {
      "gemm", "gemv", "nvjet", "conv", "fprop", "dgrad", "wgrad", "hmma", "wgmma", "xmma", "cutlass",
      "matmul", "fmha", "flash_fwd", "flash_bwd", "winograd", "scudnn"};
  static constexpr std::array<std::string_view, 4> elementwise = {"elementwise_kernel", "vectorized_elementwise",
                                                                  "unrolled_elementwise", "reduce_kernel"};
  // ATen's own pointwise and reduction kernels can carry any functor name ("convert").
  const bool aten_pointwise = has_any(n, elementwise);
  if (aten_pointwise && !has(n, "reduce_kernel")) f |= kElementwise;
  if (!aten_pointwise && has_any(n, matmul) && !has(n, "splitkreduce") && !(f & kCommunication)) f |= kMatmul;
  static constexpr std::array<std::string_view, 5> not_fusible = {"multi_tensor_apply", "fmha", "flash", "attention",
                                                                   "sdpa"};
  if (k.origin == Origin::kAten && !(f & (kMatmul | kCommunication)) && !has_any(n, not_fusible)) f |= kMemoryBound;
  // cuDNN's batch norm (NCHW training): torch.compile decomposes it into fused reductions.
  if (k.origin == Origin::kCudnn && has(n, "cudnn::bn_")) f |= kMemoryBound;
  static constexpr std::array<std::string_view, 6> conv = {"conv", "fprop", "dgrad", "wgrad", "winograd", "scudnn"};
  if ((f & kMatmul) && has_any(n, conv)) f |= kConvolution;

  if (f & kMatmul) {
    char nv = nvjet_input_type(n);
    static constexpr std::array<std::string_view, 4> fp64 = {"dgemm", "f64", "double", "zgemm"};
    static constexpr std::array<std::string_view, 10> simt = {"sgemm", "ffma", "simt", "gemmsn", "gemv", "gemmk1",
                                                              "f32f32_f32f32_f32", "implicit_convolve_sgemm",
                                                              "scudnn", "cutlassf_f32"};
    static constexpr std::array<std::string_view, 19> tensor = {
        "tensorop", "tf32", "bf16", "bfloat16", "f16", "fp16", "half", "hmma", "wgmma", "gmma", "s16816",
        "s1688", "h16816", "h1688", "i8816", "tensor16x8", "_mma", "xmma", "fp8"};
    if (nv == 'd' || (nv == 0 && has_any(n, fp64))) {
      f |= kFp64;
    } else if (nv == 's' || (nv == 0 && has_any(n, simt) && !has(n, "tf32"))) {
      f |= kFp32Simt;
    } else if (nv != 0 || has_any(n, tensor) || has(n, "flash_fwd") || has(n, "flash_bwd")) {
      f |= kTensorCore;
    }
  }

  if (has(n, "softmax") && !has(n, "logsoftmax") && !has(n, "log_softmax")) {
    bool log = false;
    // softmax_warp_forward<in, out, acc, log2_elements, is_log_softmax, is_masked>
    if (size_t p = n.find("softmax_warp_"); p != std::string::npos) log = template_arg(n, p, 4) == "true";
    if (!log) f |= (has(n, "backward") || has(n, "bwd")) ? kSoftmaxBackward : kSoftmaxForward;
  }
  static constexpr std::array<std::string_view, 4> transpose = {"nchwtonhwc", "nhwctonchw", "nchw2nhwc", "nhwc2nchw"};
  if (has_any(n, transpose)) f |= kLayoutTranspose;
  k.flags = f;
  return k;
}

ApiClass classify_api(std::string_view n) {
  auto contains = [&](std::string_view p) { return n.find(p) != std::string_view::npos; };
  if (starts(n, "cudaLaunch") || starts(n, "cuLaunch") || starts(n, "cudaGraphLaunch") || starts(n, "cuGraphLaunch"))
    return ApiClass::kLaunch;
  if (contains("Synchronize")) return ApiClass::kSync;
  if (starts(n, "cuModuleLoad") || starts(n, "cuLibraryLoad") || starts(n, "cudaLibraryLoad")) return ApiClass::kCodeLoad;
  if (contains("Async")) {
    if (contains("Malloc") || contains("Free") || contains("MemAlloc")) return ApiClass::kOther;  // stream-ordered
    if (contains("Memcpy") || contains("Memset") || contains("Prefetch")) return ApiClass::kLaunch;
    return ApiClass::kOther;
  }
  if (contains("Memcpy")) return ApiClass::kMemcpySync;
  if (contains("Memset")) return ApiClass::kLaunch;
  static constexpr std::array<std::string_view, 5> frees = {"cudaFree", "cuMemFree", "cudaHostUnregister",
                                                            "cuMemHostUnregister", "cuMemRelease"};
  for (auto f : frees)
    if (starts(n, f)) return ApiClass::kFree;
  static constexpr std::array<std::string_view, 10> allocs = {
      "cudaMalloc", "cudaHostAlloc", "cudaHostRegister", "cuMemAlloc", "cuMemHostAlloc", "cuMemHostRegister",
      "cuMemCreate", "cuMemMap", "cuMemUnmap", "cuMemAddressReserve"};
  for (auto a : allocs)
    if (starts(n, a)) return ApiClass::kAlloc;
  return ApiClass::kOther;
}

bool is_dataloader_range_name(std::string_view name) {
  if (starts(name, "enumerate(DataLoader)")) return true;
  std::string n = lower(name);
  return has(n, "dataloader") || has(n, "data_loader") || has(n, "data loading");
}

std::string_view strip_counter(std::string_view name) {
  size_t end = name.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(name[end - 1]))) --end;
  return name.substr(0, end);
}

bool is_compile_range_name(std::string_view name) {
  std::string n = lower(name.substr(0, 200));
  static constexpr std::array<std::string_view, 6> marks = {"dynamo_timed", "compile_inner", "compile_fx",
                                                            "call_user_compiler", "inductor_compile", "torchdynamo compile"};
  return has_any(n, marks);
}

bool looks_like_step_name(std::string_view name) {
  std::string n = lower(name);
  return has(n, "step") || has(n, "iter") || has(n, "batch");
}

}  // namespace gpuscope::analyzer
