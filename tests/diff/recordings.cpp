#include "tests/diff/recordings.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "store/writer.h"
#include "tests/diff/noise.h"

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
  std::remove(path.c_str());
  store::Writer w(path);
  Noise noise(spec.seed);
  w.begin();
  store::ProcessRow p;
  p.pid = kPid;
  p.host = "ci-runner";
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py";
  p.cupti_status = "ok";
  w.put(p);
  w.put(store::ThreadRow{kPid, kTid, "python3"});
  store::DeviceRow d;
  d.name = spec.device;
  d.uuid = "GPU-0";
  d.sm_count = 132;
  d.total_memory = 141'000'000'000;
  d.compute_major = 9;
  w.put(d);

  int64_t cpu = 1'000'000, gpu_end = 0, corr = 1, ext = 1;
  auto api = [&](std::string_view name, int64_t start, int64_t end) {
    store::ApiCallRow a;
    a.pid = kPid;
    a.tid = kTid;
    a.name = name;
    a.start = start;
    a.end = end;
    a.correlation = corr;
    w.add(a);
  };
  for (int step = 0; step < spec.steps; ++step) {
    const int64_t step_start = cpu;
    // The first step is slow, as warm-up is; the analyzer leaves it out.
    const double warm = step == 0 ? 3.0 : 1.0;
    cpu += ns(spec.cpu_ms * 1000.0 * noise.factor(spec.noise_cv) * warm);
    if (spec.h2d_bytes > 0) {
      const int64_t a0 = cpu, a1 = cpu + ns(4);
      api("cudaMemcpyAsync", a0, a1);
      store::MemcpyRow m;
      m.pid = kPid;
      m.context = 1;
      m.stream = kStream;
      m.correlation = corr++;
      m.start = std::max(gpu_end, a1 + ns(2));
      m.end = m.start + ns(static_cast<double>(spec.h2d_bytes) / 25e3 * noise.factor(spec.noise_cv));  // ~25 GB/s
      m.copy_kind = 1;
      m.src_kind = 2;  // pinned
      m.dst_kind = 3;
      m.bytes = spec.h2d_bytes;
      w.add(m);
      gpu_end = m.end;
      cpu = a1 + ns(1);
    }
    if (spec.peak_reserved > 0) {
      store::MemoryEventRow m;
      m.pid = kPid;
      m.ts = cpu;
      m.source = 2;
      m.bytes = 1 << 20;
      m.total_allocated = spec.peak_reserved / 2 + step;
      m.total_reserved = spec.peak_reserved;
      w.add(m);
    }
    for (const auto& k : spec.kernels) {
      for (int l = 0; l < k.launches; ++l) {
        const int64_t op_start = cpu, my_ext = ext++;
        const int64_t a0 = cpu + ns(3), a1 = a0 + ns(4);
        api("cudaLaunchKernel", a0, a1);
        store::KernelRow kr;
        kr.pid = kPid;
        kr.context = 1;
        kr.stream = kStream;
        kr.correlation = corr;
        kr.start = std::max(gpu_end, a1 + ns(3));
        kr.end = kr.start + ns(k.us * noise.factor(spec.noise_cv) * warm);
        kr.name = k.name;
        kr.grid_x = 264;
        kr.block_x = 256;
        w.add(kr);
        gpu_end = kr.end;
        if (!k.op.empty()) w.put(store::ExternalCorrelationRow{kPid, corr, my_ext});
        ++corr;
        cpu = a1 + ns(2);
        if (!k.op.empty()) {
          store::OpRow o;
          o.pid = kPid;
          o.tid = kTid;
          o.name = k.op;
          o.start = op_start;
          o.end = cpu;
          o.shapes = "[[4096,4096]]";
          o.dtypes = "[\"float\"]";
          o.external_id = my_ext;
          w.add(o);
        }
      }
    }
    const int64_t s0 = cpu, s1 = std::max(cpu + ns(2), gpu_end + ns(2));
    api("cudaStreamSynchronize", s0, s1);
    store::SyncRow sr;
    sr.pid = kPid;
    sr.tid = kTid;
    sr.type = 3;
    sr.context = 1;
    sr.stream = kStream;
    sr.start = s0;
    sr.end = s1;
    sr.correlation = corr++;
    w.add(sr);
    cpu = s1 + ns(5);
    if (spec.write_steps) w.add(store::StepRow{kPid, step, step_start, cpu, 2});
  }
  w.commit();
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
