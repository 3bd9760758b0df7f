// CPU cost of one kernel launch under several ways of recording it with
// CUPTI, measured in one process so that the machine's drift between processes
// (±20-40 % on the GPU machine) drops out. Phases, timed in rounds:
//
//   plain      before CUPTI is touched (measured first, once per round is impossible:
//              CUPTI cannot be detached and attached again cheaply; so plain runs first only)
//   kernels    CUPTI activity CONCURRENT_KERNEL only
//   runtime    kernels + activity RUNTIME (a record per runtime API call: what gpuscope does today)
//   callback   kernels + a CUPTI callback on the launch calls only (cudaLaunchKernel and
//              cudaLaunchKernelExC), writing its own 32-byte record (correlation id, thread,
//              enter and exit time) into a thread-local array: what a lighter collector could do
//   cb_all     kernels + callbacks on every runtime API call, returning at once (CUPTI's
//              own cost of calling a subscriber)
//   copy_sync  kernels + MEMCPY + SYNCHRONIZATION records
//   gpuscope   the kinds `gpuscope record` enables: kernels, MEMCPY, MEMCPY2, MEMSET,
//              SYNCHRONIZATION, RUNTIME, DRIVER
//
// Besides the launch loop, each phase times a `.item()`-like round trip: an
// empty kernel, a 4-byte device-to-host cudaMemcpyAsync into pinned memory and a
// cudaStreamSynchronize, `launches / 16` times (ns per round trip).
//
// Each phase launches an empty kernel `launches` times in batches of 256 (a
// stream synchronize after each batch, not timed, so the launch queue never
// fills and the loop measures the CPU side), and reports ns per launch. It does
// the same with a launch shaped like a library's (`wide`: 1 024 blocks of 256
// threads and a 2 KB parameter block, as cuDNN's and cuBLAS's kernels take),
// since on ResNet-50 CUPTI cost about 4.4 µs a launch against ~1 µs an empty one.
// Two more shapes ask why real models pay more than an empty launch: `varied`
// launches 64 different empty kernels in turn (a model's launches are of many
// functions: does CUPTI's cost grow with them?), and `busy` follows each launch
// with a fixed piece of CPU work reading 512 KB (as Python and torch do between
// launches: in the committed tiny-MLP recording a traced step spent 2 ms more
// outside CUDA calls than an untraced one; does CUPTI's work push the job's
// data out of the caches?). `busy` reports ns per launch and work together.
// Prints one JSON object.
//
//   bench/collector/build_launch_cost.sh OUT_DIR      (nvcc, static cudart)
//   LD_LIBRARY_PATH=<dir of libcupti.so.13> OUT_DIR/launch_cost [ROUNDS] [LAUNCHES]
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "counting_buffers.h"

__global__ void empty_kernel() {}

// A library kernel's launch: a large parameter block, many blocks; the body does nothing.
struct WideParams {
  float values[512];
};
__global__ void wide_kernel(WideParams) {}

// 64 distinct functions, launched in turn by `varied`.
template <int N>
__global__ void varied_kernel() {}
using VariedLaunch = void (*)(cudaStream_t);
template <int N>
void launch_varied(cudaStream_t stream) {
  varied_kernel<N><<<1, 1, 0, stream>>>();
}
template <int... N>
constexpr std::array<VariedLaunch, sizeof...(N)> varied_table(std::integer_sequence<int, N...>) {
  return {launch_varied<N>...};
}
constexpr auto kVaried = varied_table(std::make_integer_sequence<int, 64>{});

// `busy`: the CPU work after each launch, reading every cache line of 512 KB.
constexpr size_t kBusyBytes = 512 << 10;
std::vector<unsigned char> g_busy(kBusyBytes, 1);
volatile unsigned g_busy_sink = 0;
void cpu_work() {
  unsigned sum = 0;
  for (size_t i = 0; i < kBusyBytes; i += 64) sum += g_busy[i];
  g_busy_sink = g_busy_sink + sum;
}

enum class Shape { kEmpty, kWide, kVaried, kBusy };

namespace {

using gpuscope::bench::completed;
using gpuscope::bench::g_records;
using gpuscope::bench::now_ns;

constexpr int kBatch = 256;

// The callback phase's own record, as a collector's ring would hold it.
struct LaunchRecord {
  uint32_t correlation;
  uint32_t thread;
  uint64_t enter_ns;
  uint64_t exit_ns;
  uint64_t pad;
};
thread_local std::vector<LaunchRecord> t_records;
thread_local uint64_t t_enter_ns = 0;
std::atomic<bool> g_record_launches{false};

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (!g_record_launches.load(std::memory_order_relaxed) || domain != CUPTI_CB_DOMAIN_RUNTIME_API) return;
  if (cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
      cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060)
    return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_ENTER) {
    t_enter_ns = now_ns();
    return;
  }
  t_records.push_back({info->correlationId, static_cast<uint32_t>(pthread_self()), t_enter_ns, now_ns(), 0});
}

double time_launches(int launches, cudaStream_t stream, Shape shape = Shape::kEmpty) {
  static const WideParams params{};
  uint64_t spent = 0;
  for (int done = 0; done < launches; done += kBatch) {
    const uint64_t t0 = now_ns();
    if (shape == Shape::kWide)
      for (int i = 0; i < kBatch; ++i) wide_kernel<<<1024, 256, 0, stream>>>(params);
    else if (shape == Shape::kVaried)
      for (int i = 0; i < kBatch; ++i) kVaried[static_cast<size_t>(i) % kVaried.size()](stream);
    else if (shape == Shape::kBusy)
      for (int i = 0; i < kBatch; ++i) {
        empty_kernel<<<1, 1, 0, stream>>>();
        cpu_work();
      }
    else
      for (int i = 0; i < kBatch; ++i) empty_kernel<<<1, 1, 0, stream>>>();
    spent += now_ns() - t0;
    cudaStreamSynchronize(stream);
  }
  return static_cast<double>(spent) / launches;
}

// What `.item()` does: queue a kernel, copy 4 bytes back, wait for them.
double time_round_trips(int trips, cudaStream_t stream, int* device_word, int* host_word) {
  const uint64_t t0 = now_ns();
  for (int i = 0; i < trips; ++i) {
    empty_kernel<<<1, 1, 0, stream>>>();
    cudaMemcpyAsync(host_word, device_word, sizeof(int), cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
  }
  return static_cast<double>(now_ns() - t0) / trips;
}

const CUpti_ActivityKind kCopySyncKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
const CUpti_ActivityKind kGpuscopeKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                             CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                             CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool ok(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  std::fprintf(stderr, "launch_cost: %s: %s\n", what, s ? s : "?");
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 51200;
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) {
    std::fprintf(stderr, "launch_cost: no CUDA device\n");
    return 1;
  }
  int* device_word = nullptr;
  int* host_word = nullptr;
  cudaMalloc(&device_word, sizeof(int));
  cudaMallocHost(&host_word, sizeof(int));
  const int trips = std::max(1, launches / 16);
  time_launches(launches, stream);  // warm-up
  time_launches(launches / 4, stream, Shape::kWide);
  time_launches(launches / 4, stream, Shape::kVaried);
  time_launches(launches / 4, stream, Shape::kBusy);
  time_round_trips(trips, stream, device_word, host_word);
  std::vector<double> plain, plain_trip, plain_wide, plain_varied, plain_busy;
  for (int r = 0; r < rounds; ++r) {
    plain.push_back(time_launches(launches, stream));
    plain_wide.push_back(time_launches(launches / 4, stream, Shape::kWide));
    plain_varied.push_back(time_launches(launches / 4, stream, Shape::kVaried));
    plain_busy.push_back(time_launches(launches / 4, stream, Shape::kBusy));
    plain_trip.push_back(time_round_trips(trips, stream, device_word, host_word));
  }

  if (!ok(cuptiActivityRegisterCallbacks(gpuscope::bench::requested<8u << 20>, completed),
          "cuptiActivityRegisterCallbacks"))
    return 1;
  CUpti_SubscriberHandle subscriber;
  if (!ok(cuptiSubscribe(&subscriber, on_callback, nullptr), "cuptiSubscribe")) return 1;
  t_records.reserve(static_cast<size_t>(launches) * 2);

  const std::vector<std::string> phases = {"kernels", "runtime", "callback", "cb_all", "copy_sync", "gpuscope"};
  std::vector<std::vector<double>> ns(phases.size()), wide(phases.size()), trip(phases.size()),
      varied(phases.size()), busy(phases.size());
  ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernels");
  for (int r = 0; r < rounds; ++r) {
    for (size_t p = 0; p < phases.size(); ++p) {
      const std::string& phase = phases[p];
      if (phase == "runtime") ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), "enable runtime");
      if (phase == "callback") {
        ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
           "callback cudaLaunchKernel");
        ok(cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060),
           "callback cudaLaunchKernelExC");
        g_record_launches = true;
      }
      if (phase == "cb_all") ok(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "callback domain");
      if (phase == "copy_sync")
        for (CUpti_ActivityKind k : kCopySyncKinds) ok(cuptiActivityEnable(k), "enable copy/sync kinds");
      if (phase == "gpuscope")
        for (CUpti_ActivityKind k : kGpuscopeKinds) ok(cuptiActivityEnable(k), "enable gpuscope's kinds");
      ns[p].push_back(time_launches(launches, stream));
      wide[p].push_back(time_launches(launches / 4, stream, Shape::kWide));
      varied[p].push_back(time_launches(launches / 4, stream, Shape::kVaried));
      busy[p].push_back(time_launches(launches / 4, stream, Shape::kBusy));
      trip[p].push_back(time_round_trips(trips, stream, device_word, host_word));
      if (phase == "copy_sync")
        for (CUpti_ActivityKind k : kCopySyncKinds) cuptiActivityDisable(k);
      if (phase == "gpuscope")
        for (CUpti_ActivityKind k : kGpuscopeKinds) cuptiActivityDisable(k);
      t_records.clear();
      g_record_launches = false;
      if (phase == "runtime") ok(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), "disable runtime");
      if (phase == "callback" || phase == "cb_all") ok(cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "callbacks off");
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
  }
  std::printf("{\"launches\": %d, \"rounds\": %d, \"ns_per_launch\": {\"plain\": %.1f", launches, rounds, median(plain));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(ns[p]));
  std::printf("}, \"ns_per_wide_launch\": {\"plain\": %.1f", median(plain_wide));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(wide[p]));
  std::printf("}, \"ns_per_varied_launch\": {\"plain\": %.1f", median(plain_varied));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(varied[p]));
  std::printf("}, \"ns_per_busy_launch\": {\"plain\": %.1f", median(plain_busy));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(busy[p]));
  std::printf("}, \"ns_per_round_trip\": {\"plain\": %.1f", median(plain_trip));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(trip[p]));
  std::printf("}, \"per_round\": {\"plain\": [");
  for (size_t i = 0; i < plain.size(); ++i) std::printf("%s%.1f", i ? ", " : "", plain[i]);
  std::printf("]");
  for (size_t p = 0; p < phases.size(); ++p) {
    std::printf(", \"%s\": [", phases[p].c_str());
    for (size_t i = 0; i < ns[p].size(); ++i) std::printf("%s%.1f", i ? ", " : "", ns[p][i]);
    std::printf("]");
  }
  std::printf("}, \"activity_records\": %llu}\n", g_records.load());
  return 0;
}
