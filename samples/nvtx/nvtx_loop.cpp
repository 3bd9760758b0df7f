// nvtx_loop: a CPU-only program that emits every common kind of NVTX event
// (nested push/pop, start/end, marks) in the default domain and in a named
// domain, from two worker threads, for a fixed time. It exercises an NVTX
// injection library (NVTX_INJECTION64_PATH) without needing a GPU.
//
// The number of events is fixed by --seconds and --rate (not by how fast the
// machine is), so a profiler can be checked against the totals printed to
// stderr at the end. Stdout holds only "tick N" lines, one per second, so it
// is identical from run to run.
//
// Usage: nvtx_loop [--seconds N] [--rate ITERATIONS_PER_SECOND]

#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

constexpr int kWorkers = 2;

// NVTX names threads by their OS id (the Linux tid).
uint32_t os_thread_id() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Per worker thread, per iteration (see worker()), in the default domain and
// in the named domain.
constexpr int kDefaultPushPop = 3, kDefaultStartEnd = 1, kDefaultMarks = 1;
constexpr int kDomainPushPop = 1, kDomainStartEnd = 1, kDomainMarks = 1;
constexpr const char* kDomainName = "gpuscope.samples";

nvtxEventAttributes_t attributes(const char* message, uint32_t color) {
  nvtxEventAttributes_t a;
  std::memset(&a, 0, sizeof(a));
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = color;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

void worker(int index, nvtxDomainHandle_t domain, nvtxStringHandle_t registered,
            clock_type::time_point start, long iterations, clock_type::duration period) {
  std::string thread_name = "nvtx_worker_" + std::to_string(index);
  nvtxNameOsThreadA(os_thread_id(), thread_name.c_str());

  nvtxEventAttributes_t step = attributes("domain_step", 0xff3366cc);
  // A registered string exercises the handle path of injection libraries.
  nvtxEventAttributes_t work = attributes(nullptr, 0xff33cc66);
  work.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  work.message.registered = registered;
  nvtxEventAttributes_t mark = attributes("domain_mark", 0xffcc3333);

  for (long i = 0; i < iterations; ++i) {
    // Start/end ranges may cross push/pop nesting, unlike push/pop ranges.
    nvtxRangeId_t outer_id = nvtxRangeStartA("default_start_end");

    nvtxRangePushA("outer");
    nvtxRangePushA("middle");
    nvtxRangePushA("inner");
    nvtxMarkA("default_mark");
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeEnd(outer_id);
    nvtxRangePop();

    nvtxDomainRangePushEx(domain, &step);
    nvtxRangeId_t work_id = nvtxDomainRangeStartEx(domain, &work);
    nvtxDomainMarkEx(domain, &mark);
    nvtxDomainRangePop(domain);
    nvtxDomainRangeEnd(domain, work_id);

    std::this_thread::sleep_until(start + period * (i + 1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  long seconds = 5;
  long rate = 1000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::strtol(argv[++i], nullptr, 10);
    } else if (!std::strcmp(argv[i], "--rate") && i + 1 < argc) {
      rate = std::strtol(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: %s [--seconds N] [--rate ITERATIONS_PER_SECOND]\n", argv[0]);
      return 2;
    }
  }
  if (seconds < 0 || rate < 1) {
    std::fprintf(stderr, "nvtx_loop: --seconds must be >= 0 and --rate >= 1\n");
    return 2;
  }

  nvtxNameOsThreadA(os_thread_id(), "nvtx_main");
  nvtxDomainHandle_t domain = nvtxDomainCreateA(kDomainName);
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "domain_start_end");

  const clock_type::time_point start = clock_type::now();
  const long iterations = seconds * rate;
  const auto period = std::chrono::duration_cast<clock_type::duration>(
      std::chrono::duration<double>(1.0 / static_cast<double>(rate)));
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back(worker, w, domain, registered, start, iterations, period);
  }

  // One start/end range per second on the main thread, around its tick.
  for (long s = 1; s <= seconds; ++s) {
    nvtxRangeId_t second = nvtxRangeStartA("second");
    std::this_thread::sleep_until(start + std::chrono::seconds(s));
    std::printf("tick %ld\n", s);
    std::fflush(stdout);  // a line per second, even when stdout is a pipe
    nvtxRangeEnd(second);
  }
  for (std::thread& t : workers) t.join();
  nvtxDomainDestroy(domain);

  // The main thread adds one default-domain start/end range per second.
  const long n = iterations * kWorkers;
  std::fprintf(stderr,
               "nvtx_loop: worker_threads=%d iterations_per_thread=%ld; default domain: "
               "push_pop=%ld start_end=%ld marks=%ld; domain %s: push_pop=%ld start_end=%ld "
               "marks=%ld\n",
               kWorkers, iterations, n * kDefaultPushPop, n * kDefaultStartEnd + seconds,
               n * kDefaultMarks, kDomainName, n * kDomainPushPop, n * kDomainStartEnd,
               n * kDomainMarks);
  return 0;
}
