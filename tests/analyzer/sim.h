// A tiny simulator of a training process that writes a gpuscope recording
// through test_support::RecordingBuilder: one CPU thread issuing work, GPU streams that queue it. Launches
// cost CPU time and start on the GPU when both the launch and the stream are
// ready, so queueing, idle gaps and syncs come out as in a real trace.
// Used by the analyzer tests (planted bottlenecks) and bench/analyzer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/recording_builder.h"

namespace gpuscope::testing {

constexpr int64_t us(double v) { return static_cast<int64_t>(v * 1000); }
constexpr int64_t ms(double v) { return static_cast<int64_t>(v * 1'000'000); }

// Kernel names as real recordings show them.
namespace names {
inline constexpr const char* kGemmBf16 =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
inline constexpr const char* kSgemm = "ampere_sgemm_128x64_tn";
inline constexpr const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >"
    "(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
inline constexpr const char* kMul =
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
    "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, "
    "float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)";
inline constexpr const char* kGelu =
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, "
    "at::detail::Array<char*, 2> >(int, {lambda(float)#1}, at::detail::Array<char*, 2>)";
inline constexpr const char* kSoftmax =
    "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>"
    "(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)";
inline constexpr const char* kLogSoftmax =
    "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>"
    "(float*, float const*, int, int, int, bool const*, int, bool)";
inline constexpr const char* kConv =
    "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel__5x_cudnn";
inline constexpr const char* kNchwToNhwc =
    "void cudnn::ops::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, (cudnnKernelDataType_t)2>"
    "(cudnn::ops::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)";
inline constexpr const char* kNhwcToNchw =
    "void cudnn::ops::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, (cudnnKernelDataType_t)0>"
    "(cudnn::ops::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, __nv_bfloat16*)";
inline constexpr const char* kNccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
inline constexpr const char* kTiny =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl"
    "(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() "
    "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, {lambda(float)#1}, at::detail::Array<char*, 2>)";
}  // namespace names

class Sim {
 public:
  struct Config {
    int64_t pid = 4242;  // its main thread's tid too
    int64_t device_memory = 141'000'000'000;
    int64_t sm_count = 132;
    std::string cupti_status = "ok";
    bool write_device = true;
    int64_t launch_cpu_ns = us(6);   // CPU time a launch costs the issuing thread
    int64_t launch_api_ns = us(4);   // of which inside cudaLaunchKernel
    int64_t launch_latency_ns = us(3);
    int64_t kernel_gap_ns = 0;  // the GPU's own gap between back-to-back work on a stream
    int64_t rank = store::kNull, world_size = store::kNull;  // RANK/WORLD_SIZE of a distributed job's process
    std::string host = "testhost";
    bool append = false;  // add this process to the recording at the path instead of replacing it
  };
  // Rank `rank` of a job of `world_size` processes, pid first_pid + rank; every
  // rank but the first is added to the recording the first one started.
  static Config rank_of(int64_t first_pid, int64_t rank, int64_t world_size) {
    Config c;
    c.pid = first_pid + rank;
    c.rank = rank;
    c.world_size = world_size;
    c.append = rank > 0;
    return c;
  }

  explicit Sim(const std::string& path) : Sim(path, Config{}) {}
  Sim(const std::string& path, Config cfg);
  void finish() { b_.finish(); }  // commits; the destructor does it too

  int64_t now() const { return cpu_; }
  // Time on the CPU thread outside any op (Python, numpy, ...).
  void cpu(int64_t ns) { cpu_ += ns; }
  void op_begin(std::string_view name, std::string_view shapes = {}, std::string_view dtypes = {});
  void op_end();
  void op(std::string_view name, int64_t ns) {
    op_begin(name);
    cpu(ns);
    op_end();
  }
  void dataloader(int64_t ns);
  // On this process's thread, or on `tid` (a collective library's worker thread, say).
  void range(int64_t source, std::string_view name, int64_t start, int64_t end, int64_t depth = 0,
             int64_t tid = store::kNull);

  // GPU work, queued on `stream`. Returns the correlation id.
  int64_t kernel(std::string_view name, int64_t dur, int64_t stream = 7, int64_t grid = 1024, int64_t block = 256);
  int64_t copy(int64_t copy_kind, int64_t src_kind, int64_t dst_kind, int64_t bytes, int64_t dur, int64_t stream = 7,
               bool blocking = false);
  int64_t memset(int64_t bytes, int64_t dur, int64_t stream = 7);
  // cudaStreamWaitEvent: work queued on `waiter` from now on starts after what `waitee` has queued.
  void wait_stream(int64_t waiter, int64_t waitee);
  // The CPU waits for everything queued (cudaStreamSynchronize plus a sync record).
  void sync(std::string_view api = "cudaStreamSynchronize");
  // A CUDA API call on the CPU; blocking ones (cudaFree) wait for the GPU first.
  void api(std::string_view name, int64_t dur, bool waits_for_gpu = false, int64_t return_code = 0);
  void torch_memory(int64_t allocated, int64_t reserved);
  void cuda_memory(bool alloc, int64_t bytes);

  void step_begin();
  void step_end();  // writes a step row (of step_source) unless steps are off
  bool write_steps = true;
  int64_t step_source = schema::step_source::optimizer_step;
  int64_t device = 0;  // device of the GPU work issued from now on
  int64_t gpu_idle_at() const;  // when every stream is drained

  test_support::RecordingBuilder& recording() { return b_; }
  // The external id of the next op: store::kPlacedOpIdBase and up for ops
  // `gpuscope record` placed by position in steps whose ops were not recorded.
  void set_next_op_id(int64_t id) { ext_ = id; }
  Config cfg;

 private:
  // The launch's API call on the CPU; queues `dur` on `stream` from gpu_start_.
  store::ApiCallRow launch_call(std::string_view api, int64_t stream, int64_t dur);
  int64_t current_op() const { return ops_.empty() ? store::kNull : ops_.back().ext; }
  test_support::RecordingBuilder b_;
  int64_t cpu_ = 1'000'000;
  int64_t ext_ = 1;
  int64_t step_start_ = 0, step_no_ = 0;
  int64_t gpu_start_ = 0;  // start of the work queued by the last launch
  std::map<int64_t, int64_t> stream_end_;
  struct Open {
    std::string name, shapes, dtypes;
    int64_t start, ext;
  };
  std::vector<Open> ops_;
};

}  // namespace gpuscope::testing
