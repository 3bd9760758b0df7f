// Captures on demand: the control thread (its abstract socket, admitting the
// job's own user only), each capture's lifecycle (file, writer, schedule
// phases, CUPTI teardown, close) and the C API of ondemand_api.h.
#include "collector/ondemand.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "collector/cupti_source.h"
#include "collector/device_query.h"
#include "collector/ondemand_api.h"
#include "collector/ondemand_wire.h"
#include "collector/schedule.h"
#include "collector/writer_thread.h"
#include "trace_formats/common/control_channel.h"
#include "trace_formats/common/output_name.h"
#include "trace_formats/common/settings.h"
#include "trace_formats/store/finalize.h"
#include "trace_formats/schema/meta_keys.h"

namespace gpuscope::collector::ondemand {
namespace {

std::atomic<bool> g_counting{false};
std::atomic<bool> g_cuda{false};
int g_listen = -1;
int g_wake[2] = {-1, -1};
Config g_config;
void (*g_first_tick)() = nullptr;

// The capture's lifecycle (begin, finish) and what the API waits on.
std::mutex g_mutex;
std::condition_variable g_idle;
struct Current {
  bool active = false;
  Request request;
  int waiter = -1;  // the `gpuscope trigger` connection that waits for it (control thread only)
  std::vector<int> stoppers;  // `gpuscope trigger --stop` connections, told when it is done
  bool for_watcher = false;
  bool abandoned = false;  // its trigger left before it began: the file goes too
};
Current g_current;
std::vector<std::pair<std::string, std::string>> g_meta;
uint64_t g_captures = 0;

// Control thread only: the connection of `gpuscope trigger --when/--every`
// that armed the rule (closing it disarms), and its capture template.
int g_watcher = -1;
Request g_watch;
std::string g_watch_rule;
uint64_t g_watch_count = 0;

void wake() {
  char b = 1;
  [[maybe_unused]] auto n = write(g_wake[1], &b, 1);
}

const char* phase_name(schedule::Phase p) {
  switch (p) {
    case schedule::Phase::idle: return "dormant";
    case schedule::Phase::waiting: return "waiting";
    case schedule::Phase::control: return "control";
    case schedule::Phase::traced: return "tracing";
    case schedule::Phase::done: return "finishing";
  }
  return "?";
}

std::string own_cmdline() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0') c = ' ';
  return cmd;
}

std::string or_dash(const char* v) { return v && *v ? v : "-"; }

// Until the capture's last traced step has been switched off and CUPTI torn
// down (schedule.cpp does both at that step boundary, on the job's thread,
// right after it woke this thread): the teardown hands CUPTI's last records
// to the writer to decode, so the writer must still run. A teardown still
// armed after 100 ms (the capture ended off a step boundary and the job makes
// no CUDA call) is made here, at the exit of a CUDA call of this thread; one
// deferred (not safe at that boundary, or its decode failed) is waited for
// too, as the next step boundaries try again. Up to 3 s; true when CUPTI was
// left neither tracing nor waiting for a teardown.
bool wait_for_teardown() {
  using cupti_source::State;
  for (int i = 0; i < 300; ++i) {
    const State s = cupti_source::state();
    if (s != State::kTracing && s != State::kDraining && s != State::kDeferred) return true;
    if (i % 10 == 9) cupti_source::tear_down_here();
    usleep(10000);
  }
  return false;
}

bool decode_for_teardown() { return writer_thread::decode_cupti_now(2000); }

// The capture reached done: CUPTI torn down (its last records decoded by the
// still running writer), the writer stopped, the file finalized when no
// `gpuscope trigger` will, and the job dormant again.
std::string finish() {
  Request request;
  bool abandoned = false;
  {
    std::lock_guard lock(g_mutex);
    request = g_current.request;
    abandoned = g_current.abandoned;
  }
  if (!wait_for_teardown())
    std::fprintf(stderr, "gpuscope: CUPTI still %s 3 s after the capture ended; it is torn down at a later step\n",
                 cupti_source::state_name(cupti_source::state()));
  cupti_source::flush(true);
  // Nobody decodes from here until the next capture: a teardown still to come
  // (deferred to a later step boundary) drops what CUPTI hands over, counted,
  // rather than fail on a writer that is stopping.
  cupti_source::set_before_teardown(nullptr);
  writer_thread::stop(10000);
  uint64_t first = 0, last = 0;
  schedule::captured_steps(first, last);
  std::string finalize_error;
  if (abandoned && request.create) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(request.path + suffix, ec);
  } else if (request.finalize_here) {
    try {
      store::finalize_recording(request.path);
    } catch (const std::exception& e) {
      finalize_error = e.what();
      std::fprintf(stderr, "gpuscope: capture %s not finalized: %s\n", request.path.c_str(), e.what());
    }
  }
  schedule::capture_reset();
  control::Message done{"done", {{"file", request.path}, {"trigger", request.trigger}}};
  if (first <= last) {
    done.fields["first_step"] = std::to_string(first);
    done.fields["last_step"] = std::to_string(last);
  }
  if (request.finalize_here) done.fields["finalized"] = finalize_error.empty() ? "1" : "0";
  if (abandoned) done.fields["abandoned"] = "1";
  {
    std::lock_guard lock(g_mutex);
    g_current.active = false;
    ++g_captures;
  }
  g_idle.notify_all();
  return control::format(done);
}

control::Message status() {
  control::Message m{"ok", {}};
  m.fields["pid"] = std::to_string(getpid());
  m.fields["uid"] = std::to_string(geteuid());
  m.fields["rank"] = or_dash(std::getenv("RANK"));
  m.fields["local_rank"] = or_dash(std::getenv("LOCAL_RANK"));
  m.fields["world_size"] = or_dash(std::getenv("WORLD_SIZE"));
  m.fields["steps"] = std::to_string(schedule::steps_ended());
  m.fields["state"] = phase_name(schedule::capture_phase());
  m.fields["cuda"] = g_cuda.load() ? "1" : "0";
  // What a capture of several processes needs to give every one the same steps.
  m.fields["control_steps"] = std::to_string(g_config.control_steps);
  m.fields["control_min_ms"] = std::to_string(g_config.control_steps ? g_config.control_min_ms : 0);
  if (const uint64_t median = schedule::median_step_ns()) m.fields["step_ms"] = std::to_string(median / 1e6);
  std::lock_guard lock(g_mutex);
  m.fields["captures"] = std::to_string(g_captures);
  if (g_current.active) m.fields["file"] = g_current.request.path;
  if (!g_watch_rule.empty()) m.fields["rule"] = g_watch_rule;
  std::string cmd = own_cmdline();
  if (cmd.size() > 300) cmd = cmd.substr(0, 300) + "...";
  m.fields["cmd"] = cmd;
  return m;
}

// %n in a rule's template: the capture's number from 1.
std::string capture_path(const std::string& pattern, uint64_t n) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'n') {
      out += std::to_string(n);
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      out += "%%";
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return expand_output_name(out, getpid());
}

schedule::CapturePlan plan_of(const Request& request) {
  schedule::CapturePlan plan;
  plan.start_step = request.start_step > 0 ? static_cast<uint64_t>(request.start_step) : 0;
  plan.steps = request.steps > 0 ? static_cast<uint64_t>(request.steps) : 0;
  plan.seconds_ns = request.seconds > 0 ? static_cast<uint64_t>(request.seconds * 1e9) : 0;
  if (request.control < 0) {
    plan.control_steps = g_config.control_steps;
    plan.control_min_ns = g_config.control_steps ? g_config.control_min_ms * 1000000ull : 0;
  } else {
    plan.control_steps = static_cast<uint64_t>(request.control);
  }
  return plan;
}

// The capture's schedule first (`begun`: a rule began it at a step boundary
// already), then its file and writer: the job records into its rings from the
// boundary on, and the writer drains them once the file is open.
int open_capture(const Request& request, std::string& why, bool begun) {
  if (!g_counting.load()) {
    why = "the collector is not on demand in this process (start it with gpuscope record --on-demand)";
    return -1;
  }
  std::lock_guard lock(g_mutex);
  const auto abandon = [&] {
    if (!begun) return;
    schedule::capture_end_now(now_ns());
    schedule::capture_reset();
  };
  if (g_current.active || (!begun && schedule::capture_phase() != schedule::Phase::idle)) {
    why = "a capture is already under way in this process (into " + g_current.request.path + ")";
    return -1;
  }
  if (request.path.empty()) {
    why = "no file given for the capture";
    abandon();
    return -1;
  }
  std::error_code ec;
  const std::string path = std::filesystem::absolute(request.path, ec).lexically_normal().string();
  if (request.create) {
    const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      why = "cannot create " + path + ": " + std::strerror(errno);
      abandon();
      return -1;
    }
    close(fd);
  } else if (access(path.c_str(), W_OK) != 0) {
    why = "cannot write " + path + ": " + std::strerror(errno);
    return -1;
  }
  const uint64_t began = begun ? schedule::capture_start_ns() : 0;
  if (!begun && !schedule::capture_begin(plan_of(request), why)) {
    if (request.create) std::filesystem::remove(path, ec);
    return -1;
  }
  Config c = g_config;
  c.output = path;
  // The file's clock origin (unless `gpuscope trigger` stored one): before
  // anything the capture records.
  c.origin_ns = began ? began : now_ns();
  c.meta = g_meta;
  c.meta.emplace_back(meta_key::kCaptureTrigger, request.trigger);
  if (request.create) {
    c.meta.emplace_back(meta_key::kSource, "gpuscope capture");
    c.meta.emplace_back(meta_key::kCommand, own_cmdline());
    c.meta.emplace_back(meta_key::kTrace, settings::Sources::format(settings::value<settings::Id::kTrace>()));
  }
  if (g_cuda.load()) writer_thread::set_devices_at_open(query_devices());
  writer_thread::start(c, g_first_tick);
  cupti_source::set_before_teardown(decode_for_teardown);  // this capture's writer decodes
  if (!writer_thread::wait_open(5000)) {
    writer_thread::stop(2000);
    schedule::capture_end_now(now_ns());
    schedule::capture_reset();
    if (request.create) std::filesystem::remove(path, ec);
    why = "cannot record to " + path + " (see the job's stderr)";
    return -1;
  }
  g_current = Current{};
  g_current.active = true;
  g_current.request = request;
  g_current.request.path = path;
  wake();
  return 0;
}

void handle_client(int fd) {
  // The request is read before the peer is judged: closing a connection with
  // unread data would reset it, and the refusal would never reach its reader.
  std::string line;
  if (!read_line(fd, line)) {
    close(fd);
    return;
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
    reply_error(fd, "permission denied: process " + std::to_string(getpid()) + " belongs to uid " +
                        std::to_string(geteuid()) + "; only its own user may control it");
    return;
  }
  const control::Message m = control::parse(line);
  if (m.verb == "status") {
    send_line(fd, control::format(status()));
    close(fd);
  } else if (m.verb == "capture") {
    std::string why;
    const Request r = request_from(m);
    if (begin_capture(r, why) != 0) return reply_error(fd, why);
    send_line(fd, control::format({"started",
                                   {{"file", r.path}, {"steps_ended", std::to_string(schedule::steps_ended())}}}));
    std::lock_guard lock(g_mutex);
    g_current.waiter = fd;
  } else if (m.verb == "watch") {
    if (g_watcher >= 0) return reply_error(fd, "a rule is armed already (by another gpuscope trigger --when/--every)");
    schedule::Rule rule;
    rule.slow_factor = real(m, "slow");
    rule.every_ns = static_cast<uint64_t>(real(m, "every") * 1e9);
    rule.cooldown_ns = static_cast<uint64_t>(real(m, "cooldown") * 1e9);
    if (rule.slow_factor <= 1 && rule.every_ns == 0) return reply_error(fd, "watch: no rule (slow=X with X > 1, or every=S)");
    g_watch = request_from(m);
    g_watch.create = true;
    g_watch_count = 0;
    g_watch_rule = m.get("rule", "armed");
    rule.plan = plan_of(g_watch);
    schedule::set_rule(rule, now_ns());
    send_line(fd, control::format({"ok", {}}));
    g_watcher = fd;
  } else if (m.verb == "cancel") {
    schedule::capture_end_now(now_ns());
    send_line(fd, control::format({"ok", {}}));
    close(fd);
  } else if (m.verb == "stop") {
    // `gpuscope trigger --stop`, or a trigger interrupted by Ctrl-C: the
    // capture ends now (its traced stretch ends here); this connection is
    // told when its file is closed (and finalized, when the job does that).
    std::lock_guard lock(g_mutex);
    if (!g_current.active) {
      reply_error(fd, std::string("no capture under way (it is ") + phase_name(schedule::capture_phase()) + ")");
      return;
    }
    const bool trigger_waits = !g_current.request.finalize_here;  // a trigger (or --when watch) finalizes it
    // Not begun yet (no step boundary since the trigger): given up, its empty file removed.
    if (schedule::capture_phase() == schedule::Phase::waiting) g_current.abandoned = true;
    schedule::capture_end_now(now_ns());
    send_line(fd, control::format({"stopping",
                                   {{"file", g_current.request.path},
                                    {"steps_ended", std::to_string(schedule::steps_ended())},
                                    {"finalized_by", trigger_waits ? "trigger" : "job"}}}));
    g_current.stoppers.push_back(fd);
    wake();
  } else {
    reply_error(fd, "unknown request '" + m.verb + "'");
  }
}

// The waiter or watcher hung up (or sent something): true when it is gone.
bool hung_up(int fd) {
  char buf[64];
  const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void serve() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the job's signals are the job's threads'
  for (;;) {
    int waiter = -1;
    bool active = false;
    {
      std::lock_guard lock(g_mutex);
      waiter = g_current.waiter;
      active = g_current.active;
    }
    std::vector<pollfd> fds = {{g_listen, POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    if (waiter >= 0) fds.push_back({waiter, POLLIN, 0});
    if (g_watcher >= 0) fds.push_back({g_watcher, POLLIN, 0});
    // While a capture runs, its phases are checked every 100 ms too (a
    // capture ended by the API or at exit, a timed one).
    if (poll(fds.data(), fds.size(), active ? 100 : 1000) < 0 && errno != EINTR) usleep(100000);
    if (fds[1].revents) {
      char buf[64];
      while (read(g_wake[0], buf, sizeof buf) > 0) {
      }
    }
    if (!g_counting.load()) continue;
    if (fds[0].revents & POLLIN) {
      const int fd = accept4(g_listen, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) handle_client(fd);
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!fds[i].revents || !hung_up(fds[i].fd)) continue;
      close(fds[i].fd);
      std::lock_guard lock(g_mutex);
      if (fds[i].fd == g_watcher) {
        g_watcher = -1;
        g_watch_rule.clear();
        schedule::set_rule({}, now_ns());
        if (g_current.active && g_current.for_watcher) g_current.request.finalize_here = true;
      }
      if (fds[i].fd == g_current.waiter) {
        // Nobody waits for the file any more (its `gpuscope trigger` was
        // killed, or interrupted twice): the capture ends now and its file is
        // finalized here; or, when the capture has not begun (a process whose
        // steps stopped coming), it is given up and its empty file removed.
        g_current.waiter = -1;
        g_current.request.finalize_here = true;
        if (schedule::capture_phase() == schedule::Phase::waiting) g_current.abandoned = true;
        schedule::capture_end_now(now_ns());
      }
    }
    if (active && schedule::capture_phase() == schedule::Phase::done) {
      bool for_watcher = false;
      std::vector<int> stoppers;
      {
        std::lock_guard lock(g_mutex);
        waiter = g_current.waiter;
        for_watcher = g_current.for_watcher;
        g_current.waiter = -1;
        stoppers.swap(g_current.stoppers);
      }
      const std::string done = finish();
      if (waiter >= 0) {
        send_line(waiter, done);
        close(waiter);
      }
      for (int fd : stoppers) {
        send_line(fd, done);
        close(fd);
      }
      if (for_watcher && g_watcher >= 0) send_line(g_watcher, done);
    }
    // A rule fired: its capture began at that step boundary; its file now.
    const std::string fired = schedule::take_rule_fired();
    if (!fired.empty()) {
      Request r = g_watch;
      r.path = capture_path(g_watch.path, ++g_watch_count);
      r.trigger = fired;
      r.finalize_here = g_watcher < 0;  // its `gpuscope trigger` left meanwhile
      std::string why;
      if (open_capture(r, why, true) != 0) {
        if (g_watcher >= 0) send_line(g_watcher, control::format({"skipped", {{"why", why}, {"trigger", fired}}}));
      } else {
        if (g_watcher >= 0) send_line(g_watcher, control::format({"started", {{"file", r.path}, {"trigger", fired}}}));
        std::lock_guard lock(g_mutex);
        g_current.for_watcher = true;
      }
    }
  }
}

}  // namespace

void start(const Config& config, void (*first_tick)()) {
  g_config = config;
  g_first_tick = first_tick;
  if (pipe2(g_wake, O_NONBLOCK | O_CLOEXEC) != 0) return;
  g_listen = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = control::socket_name(getpid());
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // abstract: sun_path[0] is NUL
  const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (g_listen < 0 || bind(g_listen, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(g_listen, 16) != 0) {
    std::fprintf(stderr, "gpuscope: on-demand control channel not opened (%s): this process cannot be triggered\n",
                 std::strerror(errno));
    if (g_listen >= 0) close(g_listen);
    g_listen = -1;
    return;
  }
  schedule::set_attention_hook(wake);
  g_counting.store(true);
  std::thread(serve).detach();
}

bool counting() { return g_counting.load(std::memory_order_relaxed); }
void note_cuda_initialized() { g_cuda.store(true); }
bool cuda_initialized() { return g_cuda.load(); }

void forget_in_child() {
  g_counting.store(false);
  if (g_listen >= 0) close(g_listen);
  g_listen = -1;
}

void end_at_exit() {
  if (!g_counting.exchange(false)) return;
  schedule::capture_end_now(now_ns());
}

void remember_meta(const std::string& key, const std::string& value) {
  std::lock_guard lock(g_mutex);
  for (auto& [k, v] : g_meta)
    if (k == key) {
      v = value;
      return;
    }
  g_meta.emplace_back(key, value);
}

int begin_capture(const Request& request, std::string& why) { return open_capture(request, why, false); }

int end_capture(int timeout_ms, std::string& why) {
  if (!g_counting.load()) {
    why = "the collector is not on demand in this process";
    return -1;
  }
  std::unique_lock lock(g_mutex);
  if (!g_current.active) {
    if (g_captures > 0) return 0;  // it ended by itself and its file is closed
    why = "no capture under way";
    return -1;
  }
  schedule::capture_end_now(now_ns());
  wake();
  if (!g_idle.wait_for(lock, std::chrono::milliseconds(timeout_ms), [] { return !g_current.active; })) {
    why = "the capture's file was not closed within " + std::to_string(timeout_ms / 1000) + " s";
    return -1;
  }
  return 0;
}

int state() {
  if (!g_counting.load()) return GPUSCOPE_CAPTURE_UNAVAILABLE;
  return static_cast<int>(schedule::capture_phase());
}

}  // namespace gpuscope::collector::ondemand
