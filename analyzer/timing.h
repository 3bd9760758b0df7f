// Phase timings on stderr when GPUSCOPE_ANALYZE_TIMING is set, for bench/analyzer.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "trace_formats/common/settings.h"

namespace gpuscope::analyzer {

class PhaseTimer {
 public:
  PhaseTimer() : on_(settings::value<settings::Id::kAnalyzeTiming>()) {}
  // Wall time and this thread's CPU time since the last mark (CPU time does not
  // depend on what else the machine runs).
  void mark(const char* phase) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    double cpu = thread_cpu();
    std::fprintf(stderr, "gpuscope analyze: %-24s wall %7.3f s  cpu %7.3f s  rss %5ld MiB  peak %5ld MiB\n", phase,
                 std::chrono::duration<double>(now - last_).count(), cpu - last_cpu_, status_mib("VmRSS:"),
                 status_mib("VmHWM:"));
    last_ = now;
    last_cpu_ = cpu;
  }

 private:
  static long status_mib(const char* key) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long kb = 0;
    const size_t n = std::strlen(key);
    while (std::fgets(line, sizeof line, f))
      if (std::strncmp(line, key, n) == 0) kb = std::atol(line + n);
    std::fclose(f);
    return kb / 1024;
  }
  static double thread_cpu() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  }
  bool on_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double last_cpu_ = thread_cpu();
};

}  // namespace gpuscope::analyzer
