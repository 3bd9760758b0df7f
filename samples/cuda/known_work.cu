// known_work: a CUDA program whose GPU work is known exactly, so a profiler's
// counts (kernels, memcpys, memsets, NVTX ranges, streams, threads) can be
// checked against `--expect FILE`.
//
// The work is written down first as a plan (a list of steps per host thread);
// the expected totals are computed from that same plan and the run executes it
// step by step, so the two cannot drift apart.
//
// Choices that keep the counts unambiguous:
//  - kernels are extern "C", so the recorded name is the plain name;
//  - every copy and memset is one cudaMemcpyAsync / cudaMemsetAsync call on the
//    thread's own non-blocking stream (CUPTI records one activity per call,
//    also for pageable memory); nothing is issued on the default stream;
//  - sizes are small (1 MiB), so the whole run takes milliseconds of GPU time.
//
// Usage: known_work [--expect FILE] [--no-run]
//   --expect FILE  write the expected totals as JSON to FILE
//   --no-run       only write the expectation (works without a GPU)

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

void check(cudaError_t err, const char* what, int line) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "known_work: %s failed at line %d: %s\n", what, line,
                 cudaGetErrorString(err));
    std::exit(1);
  }
}
#define CHECK(call) check((call), #call, __LINE__)

constexpr int kThreads = 2;
constexpr size_t kBufferBytes = 1 << 20;  // every buffer is 1 MiB
constexpr int kFloats = static_cast<int>(kBufferBytes / sizeof(float));
constexpr int kIterations = 10;  // compute iterations per thread

}  // namespace

extern "C" __global__ void scale_kernel(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

extern "C" __global__ void add_kernel(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

namespace {

// Which buffer a copy or memset touches. Each thread owns one of each.
enum class Buffer { pageable, pinned, device_a, device_b };

enum class StepKind { kernel_scale, kernel_add, memcpy, memset, range_push, range_pop };

struct Step {
  StepKind kind;
  Buffer dst = Buffer::device_a;
  Buffer src = Buffer::device_a;
  size_t bytes = 0;
  const char* range_name = nullptr;  // for range_push
};

Step kernel(StepKind k) { return Step{k}; }
Step copy(Buffer dst, Buffer src, size_t bytes) {
  return Step{StepKind::memcpy, dst, src, bytes};
}
Step memset_step(Buffer dst, size_t bytes) {
  return Step{StepKind::memset, dst, dst, bytes};
}
Step push(const char* name) {
  Step s{StepKind::range_push};
  s.range_name = name;
  return s;
}
Step pop() { return Step{StepKind::range_pop}; }

bool on_device(Buffer b) { return b == Buffer::device_a || b == Buffer::device_b; }

const char* kind_word(Buffer b) {
  switch (b) {
    case Buffer::pageable: return "pageable";
    case Buffer::pinned: return "pinned";
    default: return "device";
  }
}

std::string direction(const Step& s) {
  std::string d = on_device(s.src) ? "Dto" : "Hto";
  return d + (on_device(s.dst) ? "D" : "H");
}

// An explicit kind, not cudaMemcpyDefault, so nothing is left to inference.
cudaMemcpyKind copy_kind(const Step& s) {
  if (on_device(s.src)) return on_device(s.dst) ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
  return on_device(s.dst) ? cudaMemcpyHostToDevice : cudaMemcpyHostToHost;
}

// The plan of one worker thread. Both threads run the same plan, each on its
// own stream and its own buffers.
std::vector<Step> thread_plan() {
  const size_t half = kBufferBytes / 2;
  std::vector<Step> p;
  p.push_back(push("worker"));

  p.push_back(push("copy_in"));
  p.push_back(memset_step(Buffer::device_a, kBufferBytes));
  p.push_back(memset_step(Buffer::device_b, half));
  p.push_back(copy(Buffer::device_a, Buffer::pageable, kBufferBytes));
  p.push_back(copy(Buffer::device_a, Buffer::pageable, half));
  p.push_back(copy(Buffer::device_b, Buffer::pinned, kBufferBytes));
  p.push_back(copy(Buffer::device_b, Buffer::pinned, half));
  p.push_back(copy(Buffer::device_b, Buffer::pinned, half));
  p.push_back(pop());

  p.push_back(push("compute"));
  for (int i = 0; i < kIterations; ++i) {
    p.push_back(push("iteration"));
    p.push_back(kernel(StepKind::kernel_scale));
    if (i % 2 == 0) p.push_back(kernel(StepKind::kernel_add));
    p.push_back(pop());
  }
  p.push_back(copy(Buffer::device_b, Buffer::device_a, kBufferBytes));
  p.push_back(pop());

  p.push_back(push("copy_out"));
  p.push_back(copy(Buffer::pinned, Buffer::device_b, kBufferBytes));
  p.push_back(copy(Buffer::pinned, Buffer::device_a, half));
  p.push_back(copy(Buffer::pageable, Buffer::device_b, kBufferBytes));
  p.push_back(pop());

  p.push_back(pop());  // worker
  return p;
}

// Ranges the main thread opens around setup and teardown.
const char* const kMainRanges[] = {"setup", "teardown"};

struct CopyKey {
  std::string dir, src, dst;
  bool operator<(const CopyKey& o) const {
    return std::tie(dir, src, dst) < std::tie(o.dir, o.src, o.dst);
  }
};
struct Totals {
  std::map<std::string, long> kernels;
  std::map<CopyKey, std::pair<long, long>> copies;  // count, bytes
  long memset_count = 0, memset_bytes = 0;
  std::map<std::string, long> ranges;
};

Totals expected_totals() {
  Totals t;
  for (int th = 0; th < kThreads; ++th) {
    for (const Step& s : thread_plan()) {
      switch (s.kind) {
        case StepKind::kernel_scale: t.kernels["scale_kernel"]++; break;
        case StepKind::kernel_add: t.kernels["add_kernel"]++; break;
        case StepKind::memcpy: {
          auto& c = t.copies[{direction(s), kind_word(s.src), kind_word(s.dst)}];
          c.first++;
          c.second += static_cast<long>(s.bytes);
          break;
        }
        case StepKind::memset:
          t.memset_count++;
          t.memset_bytes += static_cast<long>(s.bytes);
          break;
        case StepKind::range_push: t.ranges[s.range_name]++; break;
        case StepKind::range_pop: break;
      }
    }
  }
  for (const char* name : kMainRanges) t.ranges[name]++;
  return t;
}

bool write_expectation(const char* path) {
  Totals t = expected_totals();
  FILE* f = std::fopen(path, "w");
  if (!f) {
    std::perror(path);
    return false;
  }
  long kernel_count = 0, copy_count = 0, copy_bytes = 0, range_count = 0;
  std::fprintf(f, "{\n  \"program\": \"known_work\",\n  \"kernels\": {");
  const char* sep = "";
  for (auto& [name, n] : t.kernels) {
    std::fprintf(f, "%s\"%s\": %ld", sep, name.c_str(), n);
    kernel_count += n;
    sep = ", ";
  }
  std::fprintf(f, "},\n  \"kernel_count\": %ld,\n  \"memcpy\": [", kernel_count);
  sep = "\n";
  for (auto& [k, v] : t.copies) {
    std::fprintf(f,
                 "%s    {\"direction\": \"%s\", \"src_kind\": \"%s\", \"dst_kind\": \"%s\", "
                 "\"count\": %ld, \"bytes\": %ld}",
                 sep, k.dir.c_str(), k.src.c_str(), k.dst.c_str(), v.first, v.second);
    copy_count += v.first;
    copy_bytes += v.second;
    sep = ",\n";
  }
  std::fprintf(f, "\n  ],\n  \"memcpy_count\": %ld,\n  \"memcpy_bytes\": %ld,\n", copy_count,
               copy_bytes);
  std::fprintf(f, "  \"memset_count\": %ld,\n  \"memset_bytes\": %ld,\n", t.memset_count,
               t.memset_bytes);
  std::fprintf(f, "  \"nvtx_ranges\": {");
  sep = "";
  for (auto& [name, n] : t.ranges) {
    std::fprintf(f, "%s\"%s\": %ld", sep, name.c_str(), n);
    range_count += n;
    sep = ", ";
  }
  std::fprintf(f, "},\n  \"nvtx_range_count\": %ld,\n", range_count);
  // Only the worker threads issue GPU work ("threads"), each on its own
  // stream; the main thread also calls the runtime (allocates, frees,
  // synchronizes), hence one more thread that makes CUDA API calls.
  std::fprintf(f, "  \"streams\": %d,\n  \"threads\": %d,\n  \"threads_calling_cuda\": %d\n}\n",
               kThreads, kThreads, kThreads + 1);
  return std::fclose(f) == 0;
}

struct ThreadBuffers {
  void* pageable = nullptr;
  void* pinned = nullptr;
  float* device_a = nullptr;
  float* device_b = nullptr;
  cudaStream_t stream = nullptr;

  void* get(Buffer b) const {
    switch (b) {
      case Buffer::pageable: return pageable;
      case Buffer::pinned: return pinned;
      case Buffer::device_a: return device_a;
      default: return device_b;
    }
  }
};

void run_plan(const ThreadBuffers& buf) {
  const int block = 256;
  const int grid = (kFloats + block - 1) / block;
  for (const Step& s : thread_plan()) {
    switch (s.kind) {
      case StepKind::kernel_scale:
        scale_kernel<<<grid, block, 0, buf.stream>>>(buf.device_a, 1.0001f, kFloats);
        CHECK(cudaGetLastError());
        break;
      case StepKind::kernel_add:
        add_kernel<<<grid, block, 0, buf.stream>>>(buf.device_a, buf.device_b, kFloats);
        CHECK(cudaGetLastError());
        break;
      case StepKind::memcpy:
        CHECK(cudaMemcpyAsync(buf.get(s.dst), buf.get(s.src), s.bytes, copy_kind(s),
                              buf.stream));
        break;
      case StepKind::memset:
        CHECK(cudaMemsetAsync(buf.get(s.dst), 0, s.bytes, buf.stream));
        break;
      case StepKind::range_push: nvtxRangePushA(s.range_name); break;
      case StepKind::range_pop: nvtxRangePop(); break;
    }
  }
  // Pageable copies may return before the data is used; wait so the thread's
  // work is complete before its buffers go away.
  CHECK(cudaStreamSynchronize(buf.stream));
}

}  // namespace

int main(int argc, char** argv) {
  const char* expect_path = nullptr;
  bool run = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--expect") && i + 1 < argc) {
      expect_path = argv[++i];
    } else if (!std::strcmp(argv[i], "--no-run")) {
      run = false;
    } else {
      std::fprintf(stderr, "usage: %s [--expect FILE] [--no-run]\n", argv[0]);
      return 2;
    }
  }
  // Written before the run so a profiler test has it even if the run fails.
  if (expect_path && !write_expectation(expect_path)) return 1;
  if (!run) return 0;

  ThreadBuffers bufs[kThreads];
  nvtxRangePushA("setup");
  for (ThreadBuffers& b : bufs) {
    b.pageable = std::malloc(kBufferBytes);
    if (!b.pageable) {
      std::fprintf(stderr, "known_work: out of host memory\n");
      return 1;
    }
    std::memset(b.pageable, 0, kBufferBytes);
    CHECK(cudaMallocHost(&b.pinned, kBufferBytes));
    std::memset(b.pinned, 0, kBufferBytes);
    CHECK(cudaMalloc(&b.device_a, kBufferBytes));
    CHECK(cudaMalloc(&b.device_b, kBufferBytes));
    // Non-blocking: no implicit ordering with (or work on) the legacy stream.
    CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  }
  nvtxRangePop();

  std::vector<std::thread> workers;
  for (const ThreadBuffers& b : bufs) workers.emplace_back(run_plan, std::cref(b));
  for (std::thread& w : workers) w.join();

  nvtxRangePushA("teardown");
  CHECK(cudaDeviceSynchronize());
  for (ThreadBuffers& b : bufs) {
    CHECK(cudaStreamDestroy(b.stream));
    CHECK(cudaFree(b.device_a));
    CHECK(cudaFree(b.device_b));
    CHECK(cudaFreeHost(b.pinned));
    std::free(b.pageable);
  }
  nvtxRangePop();

  std::printf("known_work: done\n");
  return 0;
}
