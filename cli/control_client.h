// The CLI's side of the on-demand control channel (common/control_channel.h):
// finding the processes that listen, connecting with one clear line when a
// process cannot be controlled, one request and its answers.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "trace_formats/common/control_channel.h"

namespace gpuscope::cli {

// Pids whose collector listens (abstract sockets in /proc/net/unix), ascending.
std::vector<long> listening_pids();
// The process's command line (spaces between arguments), "" when unreadable.
std::string process_command(long pid);
// The parent pid from /proc/PID/stat; 0 when unknown.
long parent_pid(long pid);

// A connection to one process's collector. The constructor throws Error with
// one line, prefixed by `who` ("trigger"), for a process that does not
// exist, has no on-demand collector, or listens for another user.
class ControlConnection {
 public:
  ControlConnection(long pid, const std::string& who);
  ~ControlConnection();
  ControlConnection(const ControlConnection&) = delete;
  ControlConnection& operator=(const ControlConnection&) = delete;
  // Sends one request line.
  void send(const control::Message& m);
  // The next answer line; false at the end of the connection (the process
  // ended, or the collector closed it). `timeout_ms` < 0 waits for ever.
  bool receive(control::Message& m, int timeout_ms = 5000);
  // receive(m, -1), except that it also returns false, at once or within
  // 200 ms, once `*interrupted` (a signal handler's flag) is non-zero.
  bool receive_unless(control::Message& m, const volatile std::sig_atomic_t* interrupted);
  // send + receive, an `error` answer thrown as Error("<who>: process PID: why").
  control::Message ask(const control::Message& m);
  int fd() const { return fd_; }
  long pid() const { return pid_; }

 private:
  long pid_;
  std::string who_;
  int fd_ = -1;
  std::string buffer_;
};

// status of one process (connection, request, answer); throws as above.
control::Message process_status(long pid, const std::string& who);

}  // namespace gpuscope::cli
