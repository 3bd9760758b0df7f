// Name heuristics: what a kernel is (origin library, tensor cores, elementwise,
// softmax, layout transpose, communication) and what a CUDA API call does
// (launch, host-blocking wait, allocation). docs/rules.md lists the patterns.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuscope::analyzer {

enum class Origin : uint8_t { kCublas, kCudnn, kAten, kTriton, kNccl, kUser };
const char* origin_name(Origin o);  // "cuBLAS", "cuDNN", "ATen", "Triton", "NCCL", "user"

enum KernelFlag : uint16_t {
  kMatmul = 1 << 0,            // GEMM/convolution/attention kernel: tensor cores could run it
  kTensorCore = 1 << 1,        // the name says it runs on tensor cores
  kFp32Simt = 1 << 2,          // the name says fp32 on CUDA cores (sgemm, ffma, simt, f32f32_f32f32_f32)
  kFp64 = 1 << 3,              // double precision
  kElementwise = 1 << 4,       // ATen elementwise kernel (unfused pointwise op)
  kSoftmaxForward = 1 << 5,    // softmax, not log-softmax
  kSoftmaxBackward = 1 << 6,
  kLayoutTranspose = 1 << 7,   // cuDNN NCHW <-> NHWC conversion
  kConvolution = 1 << 8,
  kCommunication = 1 << 9,     // NCCL
  kMemoryBound = 1 << 10,      // ATen's pointwise, reduction, norm, softmax and copy kernels and cuDNN's batch
                               // norm: what a compiler fuses (not GEMMs, attention, collectives or the
                               // optimizer's multi-tensor kernels)
};

struct KernelClass {
  Origin origin = Origin::kUser;
  uint16_t flags = 0;
  bool has(KernelFlag f) const { return (flags & f) != 0; }
};

KernelClass classify_kernel(std::string_view name);

enum class ApiClass : uint8_t {
  kOther,
  kLaunch,       // kernel or graph launch, async memcpy/memset: work queued for the GPU
  kSync,         // explicit wait: cudaStreamSynchronize, cudaDeviceSynchronize, ...
  kMemcpySync,   // cudaMemcpy and other copies that return when done
  kAlloc,        // cudaMalloc-family that does not wait for the GPU
  kFree,         // cudaFree-family: an implicit device synchronization
  kCodeLoad,     // cuModuleLoad*, cuLibraryLoad*, cudaLibraryLoad*: new GPU code (JIT-compiled kernels among it)
};

ApiClass classify_api(std::string_view name);
// cudaGraphLaunch / cuGraphLaunch: the job replays CUDA graphs.
inline bool is_graph_launch(std::string_view name) {
  return name.starts_with("cudaGraphLaunch") || name.starts_with("cuGraphLaunch");
}
// True when the calling thread waits for the GPU inside the call.
inline bool api_blocks_host(ApiClass c) {
  return c == ApiClass::kSync || c == ApiClass::kMemcpySync || c == ApiClass::kFree;
}
inline bool api_is_allocator(ApiClass c) { return c == ApiClass::kAlloc || c == ApiClass::kFree; }

// "enumerate(DataLoader)#..." and NVTX ranges naming a data loader.
bool is_dataloader_range_name(std::string_view name);

// Strips a trailing step counter ("ProfilerStep#12" -> "ProfilerStep#", "step 3" -> "step ")
// so that repeating ranges group under one name.
std::string_view strip_counter(std::string_view name);

// torch.compile compilation ranges: dynamo_timed, compile_inner, compile_fx, ...
bool is_compile_range_name(std::string_view name);

// Names that look like a training step: step, iter, batch (any case).
bool looks_like_step_name(std::string_view name);

}  // namespace gpuscope::analyzer
