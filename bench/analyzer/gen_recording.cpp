// analyzer_bench_gen OUT.db [EVENTS]: writes a synthetic training recording of
// at least EVENTS events (default 10 M: kernels, API calls, ops, copies, memsets,
// syncs, ranges, memory events; external correlations and steps come on top)
// through the simulator of the analyzer tests, for timing `gpuscope analyze` on a large input.
// The loop is launch-heavy on purpose: many short kernels make millions of GPU
// idle gaps, the most expensive case for the idle attribution.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/analyzer/sim.h"

using namespace gpuscope::testing;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: analyzer_bench_gen OUT.db [EVENTS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long long target = argc > 2 ? std::atoll(argv[2]) : 10'000'000;
  const auto t0 = std::chrono::steady_clock::now();
  Sim s(path);
  long long events = 0;
  int step = 0;
  const bool tty = isatty(2);
  while (events < target) {
    s.step_begin();
    s.dataloader(us(150));
    ++events;
    s.op_begin("aten::to", "[[256,1024]]", "[\"float\"]");
    s.copy(1, 2, 3, 1 << 20, us(30));
    s.op_end();
    events += 3;
    for (int layer = 0; layer < 60; ++layer) {
      s.op_begin("aten::linear", "[[256,1024],[1024,1024],[1024]]", "[\"c10::BFloat16\"]");
      s.op_begin("aten::addmm", "[[1024],[256,1024],[1024,1024]]", "[\"c10::BFloat16\"]");
      s.kernel(names::kGemmBf16, us(18));
      s.op_end();
      s.op_end();
      s.op_begin("aten::gelu", "[[256,1024]]", "[\"c10::BFloat16\"]");
      s.kernel(names::kGelu, us(4));
      s.op_end();
      s.op_begin("aten::add", "[[256,1024],[256,1024]]", "[\"c10::BFloat16\"]");
      s.kernel(names::kAdd, us(4));
      s.op_end();
      s.op_begin("aten::mul", "[[256,1024],[]]", "[\"c10::BFloat16\",\"Scalar\"]");
      s.kernel(names::kMul, us(3));
      s.op_end();
      s.torch_memory(1'000'000'000 + layer * 4'000'000, 2'000'000'000);
      events += 5 + 4 + 4 + 1;  // ops, launches, kernels, memory event
    }
    s.op_begin("aten::zero_");
    s.memset(1 << 20, us(5));
    s.op_end();
    events += 3;
    if (step % 4 == 0) {
      s.op_begin("aten::item");
      s.sync();
      s.op_end();
      events += 3;
    }
    s.step_end();
    ++step;
    if (step % 200 == 0) {  // bounded WAL
      s.recording().commit();
      if (tty) std::fprintf(stderr, "\ranalyzer_bench_gen: %lld of %lld events", events, target);
    }
  }
  s.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "%sanalyzer_bench_gen: %s: %lld events in %d steps, %.1f s\n", tty ? "\r" : "", path.c_str(), events,
               step, secs);
  return 0;
}
