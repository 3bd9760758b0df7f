// The least a CUPTI activity tracer can do, as a measuring stick for what
// CUPTI itself costs (bench/overhead.py's `bare_cupti` variants): loaded
// through CUDA_INJECTION64_PATH, it enables CONCURRENT_KERNEL (plus RUNTIME
// with BARE_CUPTI_RUNTIME=1), hands out 4 MB buffers, counts the records CUPTI
// returns and prints the count at exit. No clock callback, no periodic flush,
// no writer, no database. BARE_CUPTI_CLOCK=1 registers a clock_gettime
// timestamp callback as the collector does.
#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kBufferBytes = 4u << 20;
std::atomic<unsigned long long> g_records{0};

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

uint64_t CUPTIAPI clock_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::fprintf(stderr, "bare_cupti: %llu records\n", g_records.load());
}

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] == '1';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (env_on("BARE_CUPTI_CLOCK")) cuptiActivityRegisterTimestampCallback(clock_ns);
  if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) return 1;
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (env_on("BARE_CUPTI_RUNTIME")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  std::atexit(at_exit);
  return 1;
}
