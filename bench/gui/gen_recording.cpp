#include "bench/gui/gen_recording.h"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "schema/enums.h"
#include "store/writer.h"

namespace gpuscope::bench {

GeneratedCounts generate_recording(const std::string& path, int64_t events, bool progress) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  store::Writer w(path);
  w.connection().exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
  std::mt19937_64 rng(12345);
  std::vector<std::string> kernels, ops;
  for (int i = 0; i < 200; ++i)
    kernels.push_back("void at::native::kernel_" + std::to_string(i) + "<float, 128, " + std::to_string(i % 7) + ">(at::TensorIterator&)");
  for (int i = 0; i < 100; ++i) ops.push_back("aten::op_" + std::to_string(i));
  std::uniform_int_distribution<int> pick_kernel(0, 199), pick_op(0, 99);
  std::lognormal_distribution<double> kernel_ns(9.0, 1.0);  // median ~8 us

  constexpr int64_t kPid = 4242;
  GeneratedCounts n;
  w.begin();
  store::ProcessRow p;
  p.pid = kPid;
  p.exe = "/usr/bin/python3";
  p.cmdline = "python3 train.py";
  p.host = "bench";
  p.cupti_status = "ok";
  w.put(p);
  w.put(store::ThreadRow{kPid, kPid, "python3"});
  store::DeviceRow d;
  d.id = 0;
  d.name = "Synthetic GPU";
  w.put(d);

  // One "launch" = an op with a child op, one API call and one kernel (or a
  // copy every 10th time): 4 events. Steps of 2000 launches.
  const int64_t launches = events / 4;
  int64_t t = 1'000'000;
  int64_t corr = 1;
  std::vector<int64_t> stream_free(4, 0);
  int64_t step = 0, step_start = t;
  for (int64_t i = 0; i < launches; ++i) {
    if (i % 2000 == 0) {
      if (i > 0) {
        store::RangeRow r;
        r.pid = kPid;
        r.tid = kPid;
        r.name = "train_step";
        r.start = step_start;
        r.end = t;
        r.depth = 0;
        w.add(r);
        w.add(store::StepRow{kPid, step++, step_start, t, schema::step_source::optimizer_step});
        ++n.ranges;
      }
      store::RangeRow dl;
      dl.pid = kPid;
      dl.tid = kPid;
      dl.source = schema::range_source::dataloader;
      dl.name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
      dl.start = t;
      dl.end = t + 2'000'000;
      dl.depth = 1;
      w.add(dl);
      ++n.ranges;
      step_start = t;
      t += 2'100'000;
      w.add(store::CounterRow{kPid, 0, "nvml_sm_util_pct", t, static_cast<double>(step % 100)});
      ++n.counters;
    }
    const int64_t op_start = t;
    store::OpRow op;
    op.pid = kPid;
    op.tid = kPid;
    op.name = ops[static_cast<size_t>(pick_op(rng))];
    op.start = op_start;
    op.end = op_start + 9'000;
    op.depth = 0;
    w.add(op);
    store::OpRow child = op;
    child.name = ops[static_cast<size_t>(pick_op(rng))];
    child.start = op_start + 1'000;
    child.end = op_start + 8'000;
    child.depth = 1;
    w.add(child);
    n.ops += 2;
    store::ApiCallRow api;
    api.pid = kPid;
    api.tid = kPid;
    api.start = op_start + 2'000;
    api.end = op_start + 6'000;
    api.correlation = corr;
    const int stream = static_cast<int>(i % 4);
    const int64_t gpu_start = std::max(stream_free[static_cast<size_t>(stream)], api.end + 3'000);
    if (i % 10 == 9) {
      api.name = "cudaMemcpyAsync";
      store::MemcpyRow m;
      m.pid = kPid;
      m.stream = 7 + stream;
      m.correlation = corr;
      m.start = gpu_start;
      m.end = gpu_start + 20'000;
      m.copy_kind = i % 3 == 0 ? schema::copy_kind::DtoH : schema::copy_kind::HtoD;
      m.bytes = 4 << 20;
      w.add(m);
      stream_free[static_cast<size_t>(stream)] = m.end;
      ++n.memcpys;
    } else {
      api.name = "cudaLaunchKernel";
      store::KernelRow k;
      k.pid = kPid;
      k.stream = 7 + stream;
      k.correlation = corr;
      k.start = gpu_start;
      k.end = gpu_start + 1'000 + static_cast<int64_t>(kernel_ns(rng));
      k.name = kernels[static_cast<size_t>(pick_kernel(rng))];
      k.grid_x = 1024;
      k.block_x = 256;
      w.add(k);
      stream_free[static_cast<size_t>(stream)] = k.end;
      ++n.kernels;
    }
    w.add(api);
    ++n.api_calls;
    ++corr;
    t += 10'000;
    if (i % 200'000 == 199'999) {
      w.commit();
      w.begin();
      if (progress && isatty(2))
        std::fprintf(stderr, "\rgenerating %s: %lld%%", path.c_str(), static_cast<long long>(100 * i / launches));
    }
  }
  w.commit();
  if (progress && isatty(2)) std::fprintf(stderr, "\r\033[K");
  n.span_ns = t;
  return n;
}

}  // namespace gpuscope::bench
