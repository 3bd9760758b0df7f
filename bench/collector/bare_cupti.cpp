// The least a CUPTI activity tracer can do, as a measuring stick for what
// CUPTI itself costs (bench/overhead.py's `bare_cupti` variants): loaded
// through CUDA_INJECTION64_PATH, it enables CONCURRENT_KERNEL (plus RUNTIME
// with BARE_CUPTI_RUNTIME=1), hands out 4 MB buffers, counts the records CUPTI
// returns and prints the count at exit. No clock callback, no periodic flush,
// no writer, no database. BARE_CUPTI_CLOCK=1 registers a clock_gettime
// timestamp callback as the collector does.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>

#include "bench/collector/counting_buffers.h"

namespace {

using gpuscope::bench::completed;
using gpuscope::bench::g_records;

uint64_t CUPTIAPI clock_ns() { return gpuscope::bench::now_ns(); }

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
  if (cuptiActivityRegisterCallbacks(gpuscope::bench::requested<4u << 20>, completed) != CUPTI_SUCCESS) return 1;
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (env_on("BARE_CUPTI_RUNTIME")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  std::atexit(at_exit);
  return 1;
}
