// Writer throughput: fake CUPTI buffers of kernel records (as the GPU sends
// them) decoded and written by the collector's own code on one thread.
// Prints kernel rows per second (wall and CPU) and bytes per kernel row on disk.
// CPU time (user+sys of this thread) is the fair figure on a loaded machine:
// wall time there includes time spent waiting for a core.
// Usage: writer_bench [rows] [distinct_names] [--varied] [--keep PATH]
//   default   every kernel has the same launch configuration, stream and no
//             graph (the figures in docs/PERFORMANCE.md since the first run)
//   --varied  launch configuration, shared memory and graph ids follow the
//             kernel name and the stream changes per row: few columns repeat,
//             the writer's worst case (see store/row_batch.h)
//   --keep    write the database to PATH and keep it, e.g. to compare builds
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collector/cupti_decode.h"
#include "tests/collector/fake_cupti.h"

using namespace gpuscope;

namespace {

struct CpuTime {
  double user = 0, sys = 0;
};

// CPU seconds of the calling thread (the bench writes on one thread).
CpuTime thread_cpu() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return {secs(ru.ru_utime), secs(ru.ru_stime)};
}

}  // namespace

int main(int argc, char** argv) {
  const size_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const size_t names = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  const size_t per_buffer = 20'000;  // ~4 MB of CUpti_ActivityKernel10, like a CUPTI buffer
  bool varied = false;
  std::string keep;
  for (int a = 3; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--varied") {
      varied = true;
    } else if (arg == "--keep" && a + 1 < argc) {
      keep = argv[++a];
    } else {
      std::fprintf(stderr, "usage: writer_bench [rows] [distinct_names] [--varied] [--keep PATH]\n");
      return 2;
    }
  }
  std::string path = !keep.empty() ? keep : "/tmp/gpuscope_writer_bench_" + std::to_string(getpid()) + ".db";
  if (!keep.empty())
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  std::vector<std::string> kernel_names;
  for (size_t i = 0; i < names; ++i)
    kernel_names.push_back("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_" + std::to_string(i) + "EEEviT0_T1_");

  // Buffers are built up front: the GPU fills them, not the writer.
  std::vector<test::FakeBuffer> buffers((rows + per_buffer - 1) / per_buffer);
  uint64_t t = 1'000'000'000;
  for (size_t i = 0; i < rows; ++i) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = kernel_names[i % names].c_str();
    k.start = t;
    k.end = t + 2'000 + (i % 7) * 100;
    t += 3'000;
    k.streamId = 7;
    k.contextId = 1;
    k.correlationId = static_cast<uint32_t>(i * 2 + 1);
    k.gridX = 1024;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 0;
    if (varied) {
      int32_t n = static_cast<int32_t>(i % names);
      k.streamId = 7 + static_cast<uint32_t>(i % 4);
      k.gridX = 1 << (n % 12);
      k.gridY = 1 + n % 3;
      k.gridZ = 1 + n % 2;
      k.blockX = 32 * (1 + n % 16);
      k.blockY = 1 + n % 2;
      k.registersPerThread = static_cast<uint16_t>(16 + n % 64);
      k.staticSharedMemory = (n % 5) * 1024;
      k.dynamicSharedMemory = (n % 7) * 4096;
      k.graphId = n % 3 == 0 ? 1 + static_cast<uint32_t>(i / 1000) : 0;
      k.graphNodeId = n % 3 == 0 ? i : 0;
    }
    buffers[i / per_buffer].add(k);
  }

  auto api = test::fake_api();
  auto start = std::chrono::steady_clock::now();
  CpuTime cpu_start = thread_cpu();
  {
    store::Writer writer(path);
    collector::RowSink sink(writer);
    sink.pid = 4242;
    sink.origin_ns = 1'000'000'000;
    for (auto& b : buffers) {
      writer.begin();  // one transaction per buffer, as the writer thread commits per tick
      collector::decode_activity_buffer(api, b.data(), b.size(), sink);
      writer.commit();
    }
    writer.connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CpuTime cpu_end = thread_cpu();
  double user = cpu_end.user - cpu_start.user, sys = cpu_end.sys - cpu_start.sys, cpu = user + sys;
  struct stat st {};
  stat(path.c_str(), &st);
  std::printf("kernel rows: %zu (%zu distinct names%s)\n", rows, names, varied ? ", varied launches" : "");
  std::printf("write time: %.3f s wall, %.3f s CPU (%.3f user + %.3f sys) on one thread\n", secs, cpu, user,
              sys);
  std::printf("throughput: %.2f M kernel rows/s wall, %.2f M kernel rows per CPU-second\n",
              rows / secs / 1e6, rows / cpu / 1e6);
  std::printf("file size: %.1f MB, %.1f bytes per kernel row\n", st.st_size / 1e6,
              static_cast<double>(st.st_size) / static_cast<double>(rows));
  if (keep.empty())
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  return 0;
}
