#include "tests/gui/synthetic_recording.h"

#include <fstream>

#include "trace_formats/store/sqlite.h"
#include "tests/support/recording_builder.h"

namespace gpuscope::gui::test {

namespace sc = schema;
using test_support::RecordingBuilder;

void write_synthetic(const std::string& path) {
  using S = Synthetic;
  RecordingBuilder b(path);
  store::ProcessRow p = test_support::python_process(S::kPid);
  p.end = S::kFirstStep + S::kSteps * S::kStepNs + 50'000'000;
  b.process(p).device({.id = 0, .name = "Test GPU", .sm_count = 132, .total_memory = int64_t{80} << 30});

  for (int s = 0; s < S::kSteps; ++s) {
    const int64_t step_start = S::kFirstStep + s * S::kStepNs;
    b.step(s, step_start, step_start + S::kStepNs);
    b.range({.name = "train_step", .start = step_start, .end = step_start + S::kStepNs - 1'000'000, .depth = 0});
    b.dataloader(step_start + 1'000'000, step_start + 20'000'000, 1);
    for (int i = 0; i < S::kIterations; ++i) {
      const int64_t t = S::iter_start(s, i);
      b.op({.name = "aten::linear", .start = t, .end = t + 400'000, .depth = 0});
      b.op({.name = "aten::addmm", .start = t + 10'000, .end = t + 390'000, .depth = 1, .shapes = "[[32,128],[128,64]]"});
      // Launch of the gemm, then an async copy, both from inside aten::addmm.
      const store::KernelRow gemm{.device = 0, .context = 1, .stream = S::kStream, .start = t + 30'000,
                                  .end = t + 30'000 + S::gemm_ns(i), .name = "gemm_kernel", .grid_x = 128,
                                  .block_x = 256, .registers = 64};
      b.launch({.cbid = 211, .name = "cudaLaunchKernel", .start = t + 20'000, .end = t + 25'000}, gemm);
      b.launch({.cbid = 41, .name = "cudaMemcpyAsync", .start = t + 100'000, .end = t + 110'000},
               store::MemcpyRow{.device = 0, .context = 1, .stream = S::kStream, .start = t + 200'000,
                                .end = t + 280'000, .copy_kind = sc::copy_kind::HtoD,
                                .src_kind = sc::mem_kind::pageable, .dst_kind = sc::mem_kind::device,
                                .bytes = S::kCopyBytes});
      // A relu on the side stream, launched outside any op.
      store::KernelRow relu = gemm;
      relu.stream = S::kSideStream;
      relu.start = t + 520'000;
      relu.end = t + 530'000;
      relu.name = "relu_kernel";
      b.launch({.cbid = 211, .name = "cudaLaunchKernel", .start = t + 500'000, .end = t + 504'000}, relu);
    }
  }
  for (int64_t ts = 0; ts < p.end; ts += 10'000'000) {
    b.counter({.device = 0, .name = "nvml_sm_util_pct", .ts = ts, .value = static_cast<double>((ts / 10'000'000) % 100)});
    b.memory({.device = 0, .ts = ts, .source = sc::memory_source::torch_allocator, .bytes = 1 << 20,
              .total_allocated = (ts / 10'000'000 % 50) << 20, .total_reserved = int64_t{64} << 20});
  }
}

void write_synthetic_ranks(const std::string& path) {
  using S = SyntheticRanks;
  RecordingBuilder b(path);
  const int64_t end = S::kFirstStep + (S::kSteps + 1) * S::kStepNs;
  store::ProcessRow launcher = test_support::python_process(S::kLauncherPid, "node0");
  launcher.cmdline = "torchrun --nproc-per-node 4 train.py";
  launcher.end = end;
  launcher.cupti_status = "not used: the process did not initialize CUDA";
  b.process(launcher, "torchrun");
  for (int r = 0; r < S::kRanks; ++r) {
    const int64_t pid = S::kPid[r], worker = pid + 1000;
    store::ProcessRow p = launcher;
    p.pid = pid;
    p.parent_pid = S::kLauncherPid;
    p.cmdline = "python3 train.py";
    p.host = r < 2 ? "node0" : "node1";
    p.rank = p.local_rank = r;
    p.world_size = S::kRanks;
    b.process(p).thread(worker, "pt_gloo");
    auto op = [&](std::string_view name, int64_t start, int64_t ns) {
      b.op({.name = name, .start = start, .end = start + ns});
      return start + ns;
    };
    for (int k = 0; k < S::kSteps; ++k) {
      const int64_t start = S::step_start(r, k);
      const int64_t data_end = start + S::kDataNs + (r == S::kStraggler ? S::kExtraDataNs : 0);
      b.dataloader(start, data_end);
      const int64_t enqueue = op("aten::linear", data_end, S::kComputeNs);
      op("c10d::allreduce_", enqueue, S::kEnqueueNs);
      // Every rank leaves the all-reduce when the last one arrived and the data moved.
      const int64_t done = S::step_end(r, k) - S::kOptimizerNs;
      b.range({.tid = worker, .source = sc::range_source::torch_user, .name = "gloo:all_reduce",
               .start = enqueue + 10'000, .end = done, .depth = 0});
      op("Optimizer.step#SGD.step", done, S::kOptimizerNs);
      b.step(k, start, S::step_end(r, k));
    }
  }
}

void write_newer_schema(const std::string& path) {
  {
    store::Writer w(path);
  }
  store::Connection c(path, store::Connection::Mode::kReadWrite);
  c.exec("UPDATE meta SET value='999' WHERE key='schema_version'");
}

void write_garbage(const std::string& path) {
  std::ofstream f(path, std::ios::binary);
  for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 7919) & 0xff));
}

}  // namespace gpuscope::gui::test
