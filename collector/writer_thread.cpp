#include "collector/writer_thread.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "collector/clock.h"
#include "collector/process_info.h"
#include "collector/cpu_decode.h"
#include "collector/cupti_decode.h"
#include "collector/cupti_source.h"
#include "collector/emit.h"
#include "collector/free_space.h"
#include "collector/process_info.h"
#include "collector/schedule.h"
#include "collector/thread_slots.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::collector::writer_thread {
namespace {

constexpr int kTickMs = 100;

std::thread g_thread;
int g_wake[2] = {-1, -1};
int g_done[2] = {-1, -1};
std::atomic<bool> g_stop{false};
std::atomic<bool> g_finished{false};
std::atomic<bool> g_signal_stop{false};
std::atomic<int> g_opened{0};  // 0 opening, 1 open, 2 could not open
std::mutex g_lifecycle;        // start() and stop(): the exit hook and ondemand.cpp's thread may both stop
// decode_cupti_now(): requests counted up by the asking thread, served by the writer.
std::atomic<uint64_t> g_decode_wanted{0};
std::atomic<uint64_t> g_decode_served{0};
std::mutex g_decode_mutex;
std::condition_variable g_decode_cv;
void (*on_first_tick)() = [] {};
struct State;
State* g_state = nullptr;

struct State {
  Config config;
  std::unique_ptr<store::Writer> writer;
  std::unique_ptr<RowSink> sink;
  CpuDecoder cpu;
  CpuDecoder::Thread threads[kMaxThreadSlots];
  uint32_t generations[kMaxThreadSlots] = {};
  std::unordered_map<uint32_t, bool> named_threads;
  ProcessInfo process;
  int64_t flushes = 0;
  std::vector<store::DeviceRow> devices;  // put when the file opens
};
std::vector<store::DeviceRow> g_devices_at_open;  // under g_lifecycle

void decode_cupti(uint8_t* buffer, size_t valid, uint32_t session, void* ctx) {
  auto* s = static_cast<State*>(ctx);
  s->sink->begin_cupti_session(session);
  decode_activity_buffer(cupti_source::api(), buffer, valid, *s->sink);
  static bool said = false;
  if (s->sink->correlation_ever_broken() && !said) {
    said = true;
    cupti_source::forbid_teardown();
    const char* text =
        "CUPTI gave one correlation id to many API calls on a thread: from there on that CUPTI session's records "
        "are stored without kernel-to-launch links, and CUPTI is not torn down again while untraced";
    std::fprintf(stderr, "gpuscope: %s\n", text);
    emit_message(now_ns(), schema::severity::warning, text);
  }
}

void name_thread(State& s, uint32_t tid) {
  if (s.named_threads.count(tid)) return;
  s.named_threads[tid] = true;
  store::ThreadRow r;
  r.pid = s.sink->pid;
  r.tid = tid;
  std::ifstream comm("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::getline(comm, r.name);
  s.writer->put(r);
}

void drain_rings(State& s) {
  ThreadSlot* slots = thread_slots();
  for (int i = 0; i < kMaxThreadSlots; ++i) {
    ThreadSlot& slot = slots[i];
    int state = slot.state.load(std::memory_order_acquire);
    if (state == kSlotFree) continue;
    uint32_t gen = slot.generation.load(std::memory_order_acquire);
    CpuDecoder::Thread& t = s.threads[i];
    if (gen != s.generations[i]) {
      s.cpu.flush_open(t, *s.sink);
      t = CpuDecoder::Thread{};
      t.tid = slot.tid;
      s.generations[i] = gen;
      name_thread(s, slot.tid);
    }
    slot.ring.drain([&](const RecordHeader& h) { s.cpu.handle(h, t, *s.sink); });
    slot.wake_pending.store(false, std::memory_order_relaxed);
    if (state == kSlotRetired && slot.ring.empty()) {
      s.cpu.flush_open(t, *s.sink);
      int expected = kSlotRetired;
      slot.state.compare_exchange_strong(expected, kSlotFree, std::memory_order_acq_rel);
    }
  }
}

void write_process_and_stats(State& s, uint64_t now) {
  store::ProcessRow p = s.process.row;
  p.start = s.sink->rel(s.process.start_ns);
  p.end = s.sink->rel(now);
  p.cupti_status = cupti_status();
  s.writer->put(p);
  auto& w = *s.writer;
  int64_t pid = s.sink->pid;
  for (const auto& [key, value] : s.sink->totals()) w.put_stat(pid, key, value);
  uint64_t ring_drops = slotless_drops();
  for (int i = 0; i < kMaxThreadSlots; ++i) ring_drops += thread_slots()[i].dropped.load(std::memory_order_relaxed);
  w.put_stat(pid, "dropped_cpu_records", static_cast<int64_t>(ring_drops));
  w.put_stat(pid, "dropped_cupti", static_cast<int64_t>(cupti_source::dropped_records()));
  w.put_stat(pid, "dropped_cupti_no_buffer", static_cast<int64_t>(cupti_source::pool_exhausted()));
  w.put_stat(pid, "buffers_used", static_cast<int64_t>(cupti_source::buffers_used()));
  // Pauses, teardowns made, deferred, failed and given up, and CUPTI's state at this tick.
  for (const cupti_source::Stat& st : cupti_source::lifecycle_stats()) w.put_stat(pid, st.key, static_cast<int64_t>(st.value));
  w.put_stat(pid, "rows_written", w.rows_written());
  w.put_stat(pid, "flushes", ++s.flushes);
}

void write_windows(State& s, const std::vector<schedule::Window>& windows, int64_t source, std::string_view name) {
  for (const schedule::Window& w : windows) {
    store::RangeRow r;
    r.pid = r.tid = s.sink->pid;
    r.source = source;
    r.kind = schema::range_kind::start_end;
    r.name = name;
    r.start = s.sink->rel(w.start);
    r.end = s.sink->rel(w.end);
    s.writer->add(r);
  }
}

// The traced stretches, and the untraced ones measured on the GPU, as ranges on the main thread.
void write_sampling_windows(State& s, bool final_tick, uint64_t now) {
  write_windows(s, schedule::take_windows(final_tick, now), schema::range_source::sampling_window,
                store::kSamplingWindowName);
  write_windows(s, schedule::take_untraced(), schema::range_source::untraced_drained, store::kUntracedDrainedName);
}

// gpuscope's own stalls where tracing switched (cupti_source::take_own_overhead),
// as tracer overhead on the thread they held, beside CUPTI's own overhead records.
void write_own_overhead(State& s) {
  for (const cupti_source::OwnOverhead& o : cupti_source::take_own_overhead()) {
    if (!s.sink->in_window(o.start)) continue;
    s.sink->add_tracer_overhead(o.tid, o.name, o.start, o.end);
    s.sink->api_tids.emplace(static_cast<uint32_t>(o.tid), true);
  }
}

// One tick: gather everything, write it, commit. The final tick leaves CUPTI
// alone: the exiting thread has flushed it (see collector.cpp, on_exit).
void tick(State& s, bool final_tick) {
  uint64_t now = now_ns();
  // Windows and duty cycles switch tracing by time here when no steps do (schedule.cpp).
  if (!final_tick && !g_stop.load()) schedule::on_tick(s.config, now);
  if (!final_tick && !g_stop.load() && s.config.periodic_flush) cupti_source::flush(false);
  // Stopped by a signal, no thread flushed CUPTI: a handler cannot call it safely.
  if (final_tick && g_signal_stop.load()) cupti_source::flush(true);
  s.writer->begin();
  cupti_source::drain(decode_cupti, &s);
  drain_rings(s);
  for (const auto& [tid, named] : s.sink->api_tids) name_thread(s, tid);
  if (final_tick) {
    for (int i = 0; i < kMaxThreadSlots; ++i) s.cpu.flush_open(s.threads[i], *s.sink);
    s.cpu.flush_open_start_end(*s.sink);
  }
  if (schedule::scheduled(s.config)) write_sampling_windows(s, final_tick, now);
  write_own_overhead(s);
  write_process_and_stats(s, now);
  s.writer->commit();
}

// Decodes what CUPTI has handed over, for a thread waiting in decode_cupti_now.
void serve_decode_request(State& s) {
  const uint64_t wanted = g_decode_wanted.load();
  if (wanted == g_decode_served.load()) return;
  s.writer->begin();
  cupti_source::drain(decode_cupti, &s);
  s.writer->commit();
  {
    std::lock_guard lock(g_decode_mutex);
    g_decode_served.store(wanted);
  }
  g_decode_cv.notify_all();
}

bool open_database(State& s) {
  try {
    s.writer = std::make_unique<store::Writer>(s.config.output);
    s.writer->begin();
    uint64_t origin = s.config.origin_ns;
    std::string stored = s.writer->meta_default(meta_key::kOriginNs, std::to_string(origin ? origin : now_ns()));
    s.writer->meta_default(meta_key::kOriginUtcNs, std::to_string(s.process.row.start_utc_ns));
    s.writer->meta_default(meta_key::kHost, s.process.row.host);
    s.writer->meta_default(meta_key::kSource, "gpuscope collector");
    if (!s.process.job_key.empty()) s.writer->meta_default(meta_key::kJobKey, s.process.job_key);
    for (const auto& [key, value] : s.config.meta) s.writer->set_meta(key, value);
    for (const store::DeviceRow& d : s.devices) s.writer->put(d);
    s.writer->commit();
    s.sink = std::make_unique<RowSink>(*s.writer);
    s.sink->pid = s.process.row.pid;
    s.sink->origin_ns = std::stoull(stored);
    s.sink->window_start_ns = s.config.window_start_ns;
    s.sink->window_end_ns = s.config.window_end_ns;
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuscope: cannot record to %s: %s; the job runs unrecorded\n", s.config.output.c_str(),
                 e.what());
    return false;
  }
}

// Bytes an unprivileged writer may still use on the file system of `path`;
// UINT64_MAX when unknown.
uint64_t free_bytes(const std::string& path) {
  struct statvfs v {};
  if (statvfs(path.c_str(), &v) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
}

// Switches tracing off for the rest of the job: CUPTI's activities for good
// (a later resume does nothing), the plugin and the CPU sources.
void stop_tracing_for_good(State& s) {
  for (int i = 0; i < 100 && !cupti_source::stop_for_good(); ++i) {
    serve_decode_request(s);  // a switch holding the lock may wait for a decode
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  g_enabled.store(false, std::memory_order_relaxed);
}

// The disk is nearly full, or will be within a second at the rate it fills:
// says so (stderr, a message row, meta `recording_stopped`), writes what was
// gathered, and stops tracing for the rest of the job, which runs on
// untraced. A training job needs the disk for its checkpoints more than we
// need the rest of the recording.
void stop_for_space(State& s, uint64_t free) {
  const bool below = free < s.config.min_free_bytes;
  const std::string why = std::to_string(free >> 20) + " MB left on the file system of " + s.config.output +
                          (below ? ", below" : ", filling fast towards") +
                          " GPUSCOPE_MIN_FREE_MB=" + std::to_string(s.config.min_free_bytes >> 20);
  const std::string text = "recording stopped: " + why + "; the job runs on untraced";
  std::fprintf(stderr, "gpuscope: %s\n", text.c_str());
  emit_message(now_ns(), schema::severity::error, text);
  stop_tracing_for_good(s);
  cupti_source::flush(true);
  tick(s, true);
  s.writer->begin();
  s.writer->meta_default(meta_key::kRecordingStopped, why);
  s.writer->commit();
}

// A write failed (the disk filled between two checks, an I/O error): tracing
// stops as for a full disk, and the reason goes into meta `recording_stopped`
// if SQLite can still write that much, so `record` and `analyze` say the file
// ends early instead of reporting a clean recording.
void stop_for_write_error(State& s, const char* what) {
  std::fprintf(stderr, "gpuscope: recording stopped: writing %s failed: %s; the job runs on untraced\n",
               s.config.output.c_str(), what);
  stop_tracing_for_good(s);
  if (!s.writer) return;
  try {
    s.writer->rollback();
    s.writer->begin();
    s.writer->meta_default(meta_key::kRecordingStopped, std::string("writing the file failed: ") + what);
    s.writer->commit();
  } catch (const std::exception&) {
    try {
      s.writer->rollback();
    } catch (const std::exception&) {
    }
  }
}

void run(State* s) {
  if (!open_database(*s)) {
    g_enabled.store(false, std::memory_order_relaxed);
    g_opened.store(2);
    g_finished.store(true);
    return;
  }
  g_opened.store(1);
  try {
    bool first = true, stopped = false;
    FreeSpaceGuard space(s->config.min_free_bytes);
    while (!g_stop.load()) {
      pollfd p{g_wake[0], POLLIN, 0};
      if (poll(&p, 1, kTickMs) > 0) {
        char sink[64];
        while (read(g_wake[0], sink, sizeof sink) > 0) {
        }
      }
      if (g_stop.load()) break;
      serve_decode_request(*s);
      tick(*s, false);
      if (first) on_first_tick();
      first = false;
      // statvfs takes about a microsecond: checked every tick.
      if (const uint64_t free = s->config.min_free_bytes ? free_bytes(s->config.output) : UINT64_MAX;
          space.low(free, now_ns())) {
        stop_for_space(*s, free);
        stopped = true;
        break;
      }
    }
    if (!stopped) tick(*s, true);
  } catch (const std::exception& e) {
    stop_for_write_error(*s, e.what());
  }
  s->sink.reset();
  if (s->writer) {
    // The last process to finish leaves one self-contained file in rollback
    // mode, readable anywhere (a WAL-mode file needs a -shm index next to it).
    // Never waits: while another process of the job holds the file this fails
    // at once and the file stays in WAL mode.
    try {
      sqlite3_busy_timeout(s->writer->connection().raw(), 0);
      s->writer->connection().exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
    } catch (const std::exception&) {
    }
  }
  s->writer.reset();
  g_finished.store(true);
  char byte = 1;
  [[maybe_unused]] auto n = write(g_done[1], &byte, 1);
}

}  // namespace

void start(const Config& config, void (*first_tick)()) {
  std::lock_guard lock(g_lifecycle);
  if (g_thread.joinable()) return;  // one writer at a time
  on_first_tick = first_tick;
  if (g_wake[0] < 0) {
    if (pipe2(g_wake, O_NONBLOCK | O_CLOEXEC) != 0 || pipe2(g_done, O_NONBLOCK | O_CLOEXEC) != 0) return;
    set_wake_hook([] {
      char byte = 1;
      [[maybe_unused]] auto n = write(g_wake[1], &byte, 1);  // non-blocking: a full pipe already wakes
    });
  }
  // Again after an earlier writer (captures on demand, collector/ondemand.cpp):
  // its end-of-run byte would end the next stop() at once.
  char stale[64];
  while (read(g_done[0], stale, sizeof stale) > 0) {
  }
  g_stop.store(false);
  g_signal_stop.store(false);
  g_finished.store(false);
  g_opened.store(0);
  // Lives to process exit, or until stop() has joined the thread: the writer
  // may outlive static destructors.
  g_state = new State;
  g_state->config = config;
  g_state->process = read_process_info();
  g_state->devices.swap(g_devices_at_open);
  g_thread = std::thread(run, g_state);
}

void set_devices_at_open(std::vector<store::DeviceRow> rows) {
  std::lock_guard lock(g_lifecycle);
  g_devices_at_open = std::move(rows);
}

bool running() { return g_thread.joinable() && !g_finished.load(); }

bool wait_open(int timeout_ms) {
  for (int waited = 0; g_opened.load() == 0 && waited < timeout_ms; ++waited) usleep(1000);
  return g_opened.load() == 1;
}

bool decode_cupti_now(int timeout_ms) {
  if (!g_thread.joinable() || g_finished.load() || g_stop.load()) return false;
  const uint64_t wanted = g_decode_wanted.fetch_add(1) + 1;
  char byte = 1;
  [[maybe_unused]] auto n = write(g_wake[1], &byte, 1);
  std::unique_lock lock(g_decode_mutex);
  return g_decode_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                              [&] { return g_decode_served.load() >= wanted; });
}

bool stop(int timeout_ms) {
  std::lock_guard lock(g_lifecycle);
  if (!g_thread.joinable()) return true;
  g_stop.store(true);
  char byte = 1;
  [[maybe_unused]] auto n = write(g_wake[1], &byte, 1);
  // Never hold the job's exit hostage: past the timeout the thread is left behind.
  pollfd p{g_done[0], POLLIN, 0};
  if (!g_finished.load() && poll(&p, 1, timeout_ms) <= 0 && !g_finished.load()) {
    g_thread.detach();
    g_state = nullptr;  // the thread still uses it
    return false;
  }
  g_thread.join();
  delete g_state;
  g_state = nullptr;
  return true;
}

void stop_from_signal(int timeout_ms) {
  if (g_wake[1] < 0 || g_finished.load()) return;
  g_signal_stop.store(true);
  g_stop.store(true);
  char byte = 1;
  [[maybe_unused]] auto n = write(g_wake[1], &byte, 1);
  pollfd p{g_done[0], POLLIN, 0};
  poll(&p, 1, timeout_ms);
}

}  // namespace gpuscope::collector::writer_thread
