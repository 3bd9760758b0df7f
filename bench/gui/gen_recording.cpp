#include "bench/gui/gen_recording.h"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "trace_formats/schema/enums.h"
#include "tests/support/recording_builder.h"

namespace gpuscope::bench {

GeneratedCounts generate_recording(const std::string& path, int64_t events, bool progress) {
  test_support::RecordingBuilder b(path);
  b.unjournaled();
  std::mt19937_64 rng(12345);
  std::vector<std::string> kernels, ops;
  for (int i = 0; i < 200; ++i)
    kernels.push_back("void at::native::kernel_" + std::to_string(i) + "<float, 128, " + std::to_string(i % 7) + ">(at::TensorIterator&)");
  for (int i = 0; i < 100; ++i) ops.push_back("aten::op_" + std::to_string(i));
  std::uniform_int_distribution<int> pick_kernel(0, 199), pick_op(0, 99);
  std::lognormal_distribution<double> kernel_ns(9.0, 1.0);  // median ~8 us

  GeneratedCounts n;
  b.process(test_support::python_process(4242, "bench")).device({.id = 0, .name = "Synthetic GPU"});

  // One "launch" = an op with a child op, one API call and one kernel (or a
  // copy every 10th time): 4 events. Steps of 2000 launches.
  const int64_t launches = events / 4;
  int64_t t = 1'000'000;
  std::vector<int64_t> stream_free(4, 0);
  int64_t step = 0, step_start = t;
  for (int64_t i = 0; i < launches; ++i) {
    if (i % 2000 == 0) {
      if (i > 0) {
        b.range({.name = "train_step", .start = step_start, .end = t, .depth = 0});
        b.step(step++, step_start, t);
        ++n.ranges;
      }
      b.dataloader(t, t + 2'000'000, 1);
      ++n.ranges;
      step_start = t;
      t += 2'100'000;
      b.counter({.device = 0, .name = "nvml_sm_util_pct", .ts = t, .value = static_cast<double>(step % 100)});
      ++n.counters;
    }
    const int64_t op_start = t;
    b.op({.name = ops[static_cast<size_t>(pick_op(rng))], .start = op_start, .end = op_start + 9'000, .depth = 0});
    b.op({.name = ops[static_cast<size_t>(pick_op(rng))], .start = op_start + 1'000, .end = op_start + 8'000,
          .depth = 1});
    n.ops += 2;
    // The GPU work is written before its API call, so kernel names come first in the string table.
    const int64_t corr = b.next_correlation();
    const int64_t call_start = op_start + 2'000, call_end = op_start + 6'000;
    const size_t stream = static_cast<size_t>(i % 4);
    const int64_t gpu_start = std::max(stream_free[stream], call_end + 3'000);
    const bool copy = i % 10 == 9;
    if (copy) {
      stream_free[stream] = gpu_start + 20'000;
      b.memcpy({.stream = 7 + static_cast<int64_t>(stream), .correlation = corr, .start = gpu_start,
                .end = stream_free[stream],
                .copy_kind = i % 3 == 0 ? schema::copy_kind::DtoH : schema::copy_kind::HtoD, .bytes = 4 << 20});
      ++n.memcpys;
    } else {
      stream_free[stream] = gpu_start + 1'000 + static_cast<int64_t>(kernel_ns(rng));
      b.kernel({.stream = 7 + static_cast<int64_t>(stream), .correlation = corr, .start = gpu_start,
                .end = stream_free[stream], .name = kernels[static_cast<size_t>(pick_kernel(rng))], .grid_x = 1024,
                .block_x = 256});
      ++n.kernels;
    }
    b.api({.name = copy ? "cudaMemcpyAsync" : "cudaLaunchKernel", .start = call_start, .end = call_end,
           .correlation = corr});
    ++n.api_calls;
    t += 10'000;
    if (i % 200'000 == 199'999) {
      b.commit();
      if (progress && isatty(2))
        std::fprintf(stderr, "\rgenerating %s: %lld%%", path.c_str(), static_cast<long long>(100 * i / launches));
    }
  }
  b.finish();
  if (progress && isatty(2)) std::fprintf(stderr, "\r\033[K");
  n.span_ns = t;
  return n;
}

}  // namespace gpuscope::bench
