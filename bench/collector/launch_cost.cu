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
//
// Each phase launches an empty kernel `launches` times in batches of 256 (a
// stream synchronize after each batch, not timed, so the launch queue never
// fills and the loop measures the CPU side), and reports ns per launch.
// Prints one JSON object.
//
//   bench/collector/build_launch_cost.sh OUT_DIR      (nvcc, static cudart)
//   LD_LIBRARY_PATH=<dir of libcupti.so.13> OUT_DIR/launch_cost [ROUNDS] [LAUNCHES]
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

__global__ void empty_kernel() {}

namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr int kBatch = 256;
std::atomic<unsigned long long> g_records{0};

uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  unsigned long long n = 0;
  while (valid && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++n;
  g_records.fetch_add(n);
  std::free(buffer);
}

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

double time_launches(int launches, cudaStream_t stream) {
  uint64_t spent = 0;
  for (int done = 0; done < launches; done += kBatch) {
    const uint64_t t0 = now_ns();
    for (int i = 0; i < kBatch; ++i) empty_kernel<<<1, 1, 0, stream>>>();
    spent += now_ns() - t0;
    cudaStreamSynchronize(stream);
  }
  return static_cast<double>(spent) / launches;
}

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
  time_launches(launches, stream);  // warm-up
  std::vector<double> plain;
  for (int r = 0; r < rounds; ++r) plain.push_back(time_launches(launches, stream));

  if (!ok(cuptiActivityRegisterCallbacks(requested, completed), "cuptiActivityRegisterCallbacks")) return 1;
  CUpti_SubscriberHandle subscriber;
  if (!ok(cuptiSubscribe(&subscriber, on_callback, nullptr), "cuptiSubscribe")) return 1;
  t_records.reserve(static_cast<size_t>(launches) * 2);

  const std::vector<std::string> phases = {"kernels", "runtime", "callback", "cb_all"};
  std::vector<std::vector<double>> ns(phases.size());
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
      ns[p].push_back(time_launches(launches, stream));
      t_records.clear();
      g_record_launches = false;
      if (phase == "runtime") ok(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME), "disable runtime");
      if (phase == "callback" || phase == "cb_all") ok(cuptiEnableDomain(0, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "callbacks off");
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
  }
  std::printf("{\"launches\": %d, \"rounds\": %d, \"ns_per_launch\": {\"plain\": %.1f", launches, rounds, median(plain));
  for (size_t p = 0; p < phases.size(); ++p) std::printf(", \"%s\": %.1f", phases[p].c_str(), median(ns[p]));
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
