// Writer throughput: fake CUPTI buffers of kernel records (as the GPU sends
// them) decoded and written by the collector's own code on one thread.
// Prints kernel rows per second and bytes per kernel row on disk.
// Usage: writer_bench [rows] [distinct_names]
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

int main(int argc, char** argv) {
  const size_t rows = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2'000'000;
  const size_t names = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  const size_t per_buffer = 20'000;  // ~4 MB of CUpti_ActivityKernel10, like a CUPTI buffer
  std::string path = "/tmp/gpuscope_writer_bench_" + std::to_string(getpid()) + ".db";
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
    buffers[i / per_buffer].add(k);
  }

  auto api = test::fake_api();
  auto start = std::chrono::steady_clock::now();
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
  struct stat st {};
  stat(path.c_str(), &st);
  std::printf("kernel rows: %zu (%zu distinct names)\n", rows, names);
  std::printf("write time: %.3f s on one thread\n", secs);
  std::printf("throughput: %.2f M kernel rows/s\n", rows / secs / 1e6);
  std::printf("file size: %.1f MB, %.1f bytes per kernel row\n", st.st_size / 1e6,
              static_cast<double>(st.st_size) / static_cast<double>(rows));
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  return 0;
}
