#include "synthetic_recording.h"

#include <fstream>

#include "store/writer.h"

namespace gpuscope::gui::test {

void write_synthetic(const std::string& path) {
  using S = Synthetic;
  store::Writer w(path);
  w.begin();
  store::ProcessRow p;
  p.pid = S::kPid;
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py";
  p.host = "testhost";
  p.start = 0;
  p.end = S::kFirstStep + S::kSteps * S::kStepNs + 50'000'000;
  p.cupti_status = "ok";
  w.put(p);
  w.put(store::ThreadRow{S::kPid, S::kPid, "python3"});
  store::DeviceRow d;
  d.id = 0;
  d.name = "Test GPU";
  d.sm_count = 132;
  d.total_memory = int64_t{80} << 30;
  w.put(d);

  int64_t corr = 1;
  for (int s = 0; s < S::kSteps; ++s) {
    const int64_t step_start = S::kFirstStep + s * S::kStepNs;
    w.add(store::StepRow{S::kPid, s, step_start, step_start + S::kStepNs, 2});
    store::RangeRow step_range;
    step_range.pid = S::kPid;
    step_range.tid = S::kPid;
    step_range.name = "train_step";
    step_range.start = step_start;
    step_range.end = step_start + S::kStepNs - 1'000'000;
    step_range.depth = 0;
    w.add(step_range);
    store::RangeRow wait;
    wait.pid = S::kPid;
    wait.tid = S::kPid;
    wait.source = 3;
    wait.name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    wait.start = step_start + 1'000'000;
    wait.end = step_start + 20'000'000;
    wait.depth = 1;
    w.add(wait);
    for (int i = 0; i < S::kIterations; ++i) {
      const int64_t t = S::iter_start(s, i);
      store::OpRow linear;
      linear.pid = S::kPid;
      linear.tid = S::kPid;
      linear.name = "aten::linear";
      linear.start = t;
      linear.end = t + 400'000;
      linear.depth = 0;
      w.add(linear);
      store::OpRow addmm = linear;
      addmm.name = "aten::addmm";
      addmm.start = t + 10'000;
      addmm.end = t + 390'000;
      addmm.depth = 1;
      addmm.shapes = "[[32,128],[128,64]]";
      w.add(addmm);
      // Launch of the gemm, then an async copy, both from inside aten::addmm.
      store::ApiCallRow launch;
      launch.pid = S::kPid;
      launch.tid = S::kPid;
      launch.cbid = 211;
      launch.name = "cudaLaunchKernel";
      launch.start = t + 20'000;
      launch.end = t + 25'000;
      launch.correlation = corr;
      w.add(launch);
      store::KernelRow k;
      k.pid = S::kPid;
      k.device = 0;
      k.context = 1;
      k.stream = S::kStream;
      k.correlation = corr;
      k.start = t + 30'000;
      k.end = k.start + S::gemm_ns(i);
      k.name = "gemm_kernel";
      k.grid_x = 128;
      k.block_x = 256;
      k.registers = 64;
      w.add(k);
      ++corr;
      store::ApiCallRow copy_call = launch;
      copy_call.cbid = 41;
      copy_call.name = "cudaMemcpyAsync";
      copy_call.start = t + 100'000;
      copy_call.end = t + 110'000;
      copy_call.correlation = corr;
      w.add(copy_call);
      store::MemcpyRow m;
      m.pid = S::kPid;
      m.device = 0;
      m.context = 1;
      m.stream = S::kStream;
      m.correlation = corr;
      m.start = t + 200'000;
      m.end = t + 280'000;
      m.copy_kind = 1;
      m.src_kind = 1;
      m.dst_kind = 3;
      m.bytes = S::kCopyBytes;
      w.add(m);
      ++corr;
      // A relu on the side stream, launched outside any op.
      store::ApiCallRow relu_call = launch;
      relu_call.start = t + 500'000;
      relu_call.end = t + 504'000;
      relu_call.correlation = corr;
      w.add(relu_call);
      store::KernelRow relu = k;
      relu.stream = S::kSideStream;
      relu.correlation = corr;
      relu.start = t + 520'000;
      relu.end = t + 530'000;
      relu.name = "relu_kernel";
      w.add(relu);
      ++corr;
    }
  }
  for (int64_t ts = 0; ts < p.end; ts += 10'000'000) {
    w.add(store::CounterRow{S::kPid, 0, "nvml_sm_util_pct", ts, static_cast<double>((ts / 10'000'000) % 100)});
    store::MemoryEventRow mem;
    mem.pid = S::kPid;
    mem.device = 0;
    mem.ts = ts;
    mem.source = 2;
    mem.bytes = 1 << 20;
    mem.total_allocated = (ts / 10'000'000 % 50) << 20;
    mem.total_reserved = int64_t{64} << 20;
    w.add(mem);
  }
  w.commit();
}

void write_synthetic_ranks(const std::string& path) {
  using S = SyntheticRanks;
  store::Writer w(path);
  w.begin();
  const int64_t end = S::kFirstStep + (S::kSteps + 1) * S::kStepNs;
  store::ProcessRow launcher;
  launcher.pid = S::kLauncherPid;
  launcher.exe = "/usr/bin/python3";
  launcher.cmdline = "torchrun --nproc-per-node 4 train.py";
  launcher.host = "node0";
  launcher.end = end;
  launcher.cupti_status = "not used: the process did not initialize CUDA";
  w.put(launcher);
  w.put(store::ThreadRow{S::kLauncherPid, S::kLauncherPid, "torchrun"});
  for (int r = 0; r < S::kRanks; ++r) {
    const int64_t pid = S::kPid[r], worker = pid + 1000;
    store::ProcessRow p = launcher;
    p.pid = pid;
    p.parent_pid = S::kLauncherPid;
    p.cmdline = "python3 train.py";
    p.host = r < 2 ? "node0" : "node1";
    p.rank = p.local_rank = r;
    p.world_size = S::kRanks;
    w.put(p);
    w.put(store::ThreadRow{pid, pid, "python3"});
    w.put(store::ThreadRow{pid, worker, "pt_gloo"});
    auto op = [&](std::string_view name, int64_t start, int64_t ns) {
      store::OpRow o;
      o.pid = pid;
      o.tid = pid;
      o.name = name;
      o.start = start;
      o.end = start + ns;
      w.add(o);
      return o.end;
    };
    for (int k = 0; k < S::kSteps; ++k) {
      const int64_t start = S::step_start(r, k);
      store::RangeRow data;
      data.pid = pid;
      data.tid = pid;
      data.source = 3;
      data.name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
      data.start = start;
      data.end = start + S::kDataNs + (r == S::kStraggler ? S::kExtraDataNs : 0);
      data.depth = 0;
      w.add(data);
      const int64_t enqueue = op("aten::linear", data.end, S::kComputeNs);
      op("c10d::allreduce_", enqueue, S::kEnqueueNs);
      // Every rank leaves the all-reduce when the last one arrived and the data moved.
      const int64_t done = S::step_end(r, k) - S::kOptimizerNs;
      store::RangeRow gloo;
      gloo.pid = pid;
      gloo.tid = worker;
      gloo.source = 2;
      gloo.name = "gloo:all_reduce";
      gloo.start = enqueue + 10'000;
      gloo.end = done;
      gloo.depth = 0;
      w.add(gloo);
      op("Optimizer.step#SGD.step", done, S::kOptimizerNs);
      w.add(store::StepRow{pid, k, start, S::step_end(r, k), 2});
    }
  }
  w.commit();
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
