#include "tests/regress/recordings.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "tests/regress/noise.h"
#include "tests/support/recording_builder.h"

namespace gpuscope::testing {
namespace {

constexpr int64_t kPid = 5151, kTid = 5151, kStream = 7;

int64_t ns(double us) { return static_cast<int64_t>(us * 1000.0); }

}  // namespace

RunSpec base_spec() {
  RunSpec s;
  s.kernels = {
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_kernel", "aten::mm", 800, 2},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >",
       "aten::add", 120, 2},
      {"void at::native::elementwise_kernel<128, 2, mul|scale & <clamp> `x`>(int, float*)", "aten::mul", 90, 1},
      {"void at::native::multi_tensor_apply_kernel<AdamFunctor<float> >", "aten::_fused_adam_", 150, 1},
  };
  s.h2d_bytes = 8 << 20;
  s.peak_reserved = int64_t{2} << 30;
  return s;
}

RunSpec regressed_spec() {
  RunSpec s = base_spec();
  s.seed = 2;
  s.kernels[0].us *= 1.4;
  s.kernels[2] = {"fused_mul_clamp_kernel", "aten::mul", 60, 1};
  s.h2d_bytes *= 2;
  s.peak_reserved = int64_t{3} << 30;
  return s;
}

void write_run(const std::string& path, const RunSpec& spec) {
  namespace sc = schema;
  test_support::RecordingBuilder b(path);
  Noise noise(spec.seed);
  b.process(test_support::python_process(kPid, "ci-runner"))
      .device({.name = spec.device, .uuid = "GPU-0", .sm_count = 132, .total_memory = 141'000'000'000,
               .compute_major = 9});

  int64_t cpu = 1'000'000, gpu_end = 0, ext = 1;
  for (int step = 0; step < spec.steps; ++step) {
    const int64_t step_start = cpu;
    // The first step is slow, as warm-up is; the analyzer leaves it out.
    const double warm = step == 0 ? 3.0 : 1.0;
    cpu += ns(spec.cpu_ms * 1000.0 * noise.factor(spec.noise_cv) * warm);
    if (spec.h2d_bytes > 0) {
      const int64_t a0 = cpu, a1 = cpu + ns(4);
      const int64_t start = std::max(gpu_end, a1 + ns(2));
      gpu_end = start + ns(static_cast<double>(spec.h2d_bytes) / 25e3 * noise.factor(spec.noise_cv));  // ~25 GB/s
      b.launch({.name = "cudaMemcpyAsync", .start = a0, .end = a1},
               store::MemcpyRow{.context = 1, .stream = kStream, .start = start, .end = gpu_end,
                                .copy_kind = sc::copy_kind::HtoD, .src_kind = sc::mem_kind::pinned,
                                .dst_kind = sc::mem_kind::device, .bytes = spec.h2d_bytes});
      cpu = a1 + ns(1);
    }
    if (spec.peak_reserved > 0)
      b.memory({.ts = cpu, .source = sc::memory_source::torch_allocator, .bytes = 1 << 20,
                .total_allocated = spec.peak_reserved / 2 + step, .total_reserved = spec.peak_reserved});
    for (const auto& k : spec.kernels) {
      for (int l = 0; l < k.launches; ++l) {
        const int64_t op_start = cpu, my_ext = ext++;
        const int64_t a0 = cpu + ns(3), a1 = a0 + ns(4);
        const int64_t start = std::max(gpu_end, a1 + ns(3));
        gpu_end = start + ns(k.us * noise.factor(spec.noise_cv) * warm);
        b.launch({.name = "cudaLaunchKernel", .start = a0, .end = a1},
                 store::KernelRow{.context = 1, .stream = kStream, .start = start, .end = gpu_end, .name = k.name,
                                  .grid_x = 264, .block_x = 256},
                 k.op.empty() ? store::kNull : my_ext);
        cpu = a1 + ns(2);
        if (!k.op.empty())
          b.op({.name = k.op, .start = op_start, .end = cpu, .shapes = "[[4096,4096]]", .dtypes = "[\"float\"]",
                .external_id = my_ext});
      }
    }
    const int64_t s0 = cpu, s1 = std::max(cpu + ns(2), gpu_end + ns(2));
    b.launch({.name = "cudaStreamSynchronize", .start = s0, .end = s1},
             store::SyncRow{.tid = kTid, .type = sc::sync_type::stream_synchronize, .context = 1, .stream = kStream,
                            .start = s0, .end = s1});
    cpu = s1 + ns(5);
    if (spec.write_steps) b.step(step, step_start, cpu);
  }
}

namespace {

// One folder per test process, removed when the process exits.
struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuscope_diff_test_" + std::to_string(::getpid()));
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

std::string temp_path(const std::string& name) {
  static TempDir temp;
  const auto& dir = temp.path;
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

}  // namespace gpuscope::testing
