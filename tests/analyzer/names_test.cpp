#include <gtest/gtest.h>

#include "analyzer/names.h"
#include "tests/analyzer/sim.h"

namespace gpuscope::analyzer {
namespace {

struct Case {
  const char* name;
  Origin origin;
  uint16_t must, must_not;
};

TEST(KernelNames, OriginAndFlags) {
  const Case cases[] = {
      {testing::names::kGemmBf16, Origin::kCublas, kMatmul | kTensorCore, kFp32Simt | kElementwise},
      {"ampere_sgemm_128x64_tn", Origin::kCublas, kMatmul | kFp32Simt, kTensorCore},
      {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel_trt",
       Origin::kCublas, kMatmul | kFp32Simt, kTensorCore},
      {"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x8_execute_kernel_trt",
       Origin::kCublas, kMatmul | kTensorCore, kFp32Simt},
      {"nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_NTT", Origin::kCublas, kMatmul | kTensorCore, kFp32Simt},
      {"nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_TNT", Origin::kCublas, kMatmul | kTensorCore, kFp32Simt},
      {"nvjet_sss_128x128_8x4_h_bz_NNN", Origin::kCublas, kMatmul | kFp32Simt, kTensorCore},
      {"void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true, cublasGemvTensorStridedBatched<float const>>()",
       Origin::kCublas, kMatmul | kFp32Simt, kTensorCore},
      {"cutlass_80_tensorop_s16816gemm_bf16_128x256_32x3_tn_align8", Origin::kCublas, kMatmul | kTensorCore, kFp32Simt},
      {"void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params)",
       Origin::kCublas, kMatmul | kFp32Simt, kTensorCore},
      {"ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", Origin::kCublas, kMatmul | kTensorCore, kFp32Simt},
      {"volta_dgemm_64x64_nn", Origin::kCublas, kMatmul | kFp64, kTensorCore | kFp32Simt},
      {testing::names::kConv, Origin::kCudnn, kMatmul | kConvolution | kTensorCore, kFp32Simt},
      {"void cudnn::cnn::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int)",
       Origin::kCudnn, kMatmul | kConvolution | kFp32Simt, kTensorCore},
      {testing::names::kNchwToNhwc, Origin::kCudnn, kLayoutTranspose, kMatmul | kElementwise},
      {testing::names::kAdd, Origin::kAten, kElementwise, kMatmul | kTensorCore},
      {"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
       "{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, "
       "TrivialOffsetCalculator<1, unsigned int>, char*, at::native::memory::LoadWithCast<1>, at::detail::Array<char*, 2>::"
       "StoreWithCast<1> >(int, {lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>)",
       Origin::kAten, kElementwise, kMatmul},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
       "unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
       Origin::kAten, 0, kElementwise | kMatmul},
      {testing::names::kSoftmax, Origin::kAten, kSoftmaxForward, kSoftmaxBackward | kMatmul},
      {testing::names::kLogSoftmax, Origin::kAten, 0, kSoftmaxForward | kSoftmaxBackward},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
       "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
       Origin::kAten, 0, kSoftmaxForward},
      {"triton_poi_fused_add_gelu_mul_0", Origin::kTriton, 0, kElementwise | kMatmul},
      {"triton_tem_fused_mm_0", Origin::kTriton, 0, kElementwise},
      {testing::names::kNccl, Origin::kNccl, kCommunication, kMatmul},
      {"my_custom_kernel(float*, int)", Origin::kUser, 0, kMatmul | kElementwise},
      {"pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>>",
       Origin::kAten, kMatmul | kTensorCore, kFp32Simt},
  };
  for (const auto& c : cases) {
    KernelClass k = classify_kernel(c.name);
    EXPECT_EQ(origin_name(k.origin), std::string(origin_name(c.origin))) << c.name;
    EXPECT_EQ(k.flags & c.must, c.must) << c.name << " flags " << k.flags;
    EXPECT_EQ(k.flags & c.must_not, 0) << c.name << " flags " << k.flags;
  }
}

TEST(KernelNames, OddBytesDoNotBreakClassification) {
  std::string name("\xff\x00\x1b[31mgemm<\"&'>", 16);
  KernelClass k = classify_kernel(name);
  EXPECT_TRUE(k.has(kMatmul));
  EXPECT_FALSE(classify_kernel("").has(kMatmul));
}

TEST(ApiNames, Classes) {
  EXPECT_EQ(classify_api("cudaLaunchKernel"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cuLaunchKernelEx"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaGraphLaunch"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaMemcpyAsync"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaMemsetAsync"), ApiClass::kLaunch);
  EXPECT_EQ(classify_api("cudaStreamSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cudaDeviceSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cuEventSynchronize"), ApiClass::kSync);
  EXPECT_EQ(classify_api("cudaMemcpy"), ApiClass::kMemcpySync);
  EXPECT_EQ(classify_api("cuMemcpyDtoH"), ApiClass::kMemcpySync);
  EXPECT_EQ(classify_api("cudaMalloc"), ApiClass::kAlloc);
  EXPECT_EQ(classify_api("cudaHostAlloc"), ApiClass::kAlloc);
  EXPECT_EQ(classify_api("cuMemCreate"), ApiClass::kAlloc);
  EXPECT_EQ(classify_api("cudaFree"), ApiClass::kFree);
  EXPECT_EQ(classify_api("cudaFreeHost"), ApiClass::kFree);
  EXPECT_EQ(classify_api("cudaMallocAsync"), ApiClass::kOther);
  EXPECT_EQ(classify_api("cudaFreeAsync"), ApiClass::kOther);
  EXPECT_EQ(classify_api("cudaStreamWaitEvent"), ApiClass::kOther);
  EXPECT_EQ(classify_api("cudaEventRecord"), ApiClass::kOther);
  EXPECT_TRUE(api_blocks_host(ApiClass::kFree));
  EXPECT_FALSE(api_blocks_host(ApiClass::kAlloc));
}

TEST(RangeNames, DataLoaderCompileAndSteps) {
  EXPECT_TRUE(is_dataloader_range_name("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"));
  EXPECT_TRUE(is_dataloader_range_name("DataLoader.next"));
  EXPECT_FALSE(is_dataloader_range_name("forward"));
  EXPECT_TRUE(is_compile_range_name("_compile.compile_inner (dynamo_timed)"));
  EXPECT_TRUE(is_compile_range_name("compile_fx.<locals>.fw_compiler_base (dynamo_timed)"));
  EXPECT_FALSE(is_compile_range_name("Torch-Compiled Region: 0/0"));
  EXPECT_EQ(strip_counter("ProfilerStep#12"), "ProfilerStep#");
  EXPECT_EQ(strip_counter("step"), "step");
  EXPECT_TRUE(looks_like_step_name("train_step"));
  EXPECT_TRUE(looks_like_step_name("Iteration"));
  EXPECT_FALSE(looks_like_step_name("forward"));
}

}  // namespace
}  // namespace gpuscope::analyzer
