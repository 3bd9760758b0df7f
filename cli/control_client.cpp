#include "cli/control_client.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "trace_formats/common/error.h"
#include "trace_formats/common/text.h"

namespace gpuscope::cli {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool process_exists(long pid) {
  struct stat st {};
  return stat(("/proc/" + std::to_string(pid)).c_str(), &st) == 0;
}

// The collector is mapped into the process (readable for its own user only).
bool maps_collector(long pid) { return read_all("/proc/" + std::to_string(pid) + "/maps").find("libgpuscope_collector") != std::string::npos; }

std::string describe(long pid) {
  std::string cmd = process_command(pid);
  if (cmd.size() > 60) cmd = cmd.substr(0, 57) + "...";
  return "process " + std::to_string(pid) + (cmd.empty() ? "" : " (" + terminal_safe(cmd) + ")");
}

}  // namespace

std::vector<long> listening_pids() {
  std::vector<long> pids;
  std::istringstream lines(read_all("/proc/net/unix"));
  const std::string marker = "@" + std::string(control::kSocketPrefix);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    const std::string digits = line.substr(at + marker.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    pids.push_back(std::stol(digits));
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::string process_command(long pid) {
  std::string cmd = read_all("/proc/" + std::to_string(pid) + "/cmdline");
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  return cmd;
}

long parent_pid(long pid) {
  const std::string stat = read_all("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');  // the command may hold spaces and parentheses
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

ControlConnection::ControlConnection(long pid, const std::string& who) : pid_(pid), who_(who) {
  if (pid <= 0 || !process_exists(pid))
    throw Error(who + ": no process " + std::to_string(pid) + " (it has ended, or never ran)");
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw Error(who + ": cannot open a socket: " + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = control::socket_name(pid);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    const int err = errno;
    close(fd_);
    fd_ = -1;
    if (!process_exists(pid)) throw Error(who + ": no process " + std::to_string(pid) + " (it has ended)");
    if (maps_collector(pid))
      throw Error(who + ": " + describe(pid) +
                  " runs gpuscope's collector, but not on demand (start it with gpuscope record --on-demand)");
    throw Error(who + ": " + describe(pid) + " has no on-demand gpuscope collector" +
                (err == ECONNREFUSED ? "" : std::string(" (") + std::strerror(err) + ")") +
                ": start the job with gpuscope record --on-demand -- ...");
  }
  // The name is predictable: another process (another user's) may hold it.
  // Only the process itself (its collector listens) and our own user are trusted.
  ucred cred{};
  socklen_t len_cred = sizeof cred;
  if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len_cred) != 0 || cred.pid != pid) {
    close(fd_);
    fd_ = -1;
    throw Error(who + ": the control channel of process " + std::to_string(pid) + " is held by process " +
                std::to_string(cred.pid) + " (uid " + std::to_string(cred.uid) + "), not by it: refused");
  }
}

ControlConnection::~ControlConnection() {
  if (fd_ >= 0) close(fd_);
}

void ControlConnection::send(const control::Message& m) {
  const std::string line = control::format(m);
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      control::Message refusal;  // a collector that refused says why before it closes
      bool refused = false;
      try {
        refused = receive(refusal, 500) && refusal.verb == "error";
      } catch (const Error&) {
      }
      if (refused) throw Error(who_ + ": " + describe(pid_) + ": " + refusal.get("why", "refused"));
      throw Error(who_ + ": " + describe(pid_) + " closed the control channel: " + why);
    }
    off += static_cast<size_t>(n);
  }
}

bool ControlConnection::receive(control::Message& m, int timeout_ms) {
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      m = control::parse(std::string_view(buffer_).substr(0, nl));
      buffer_.erase(0, nl + 1);
      return true;
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      if (ready == 0) throw Error(who_ + ": " + describe(pid_) + " did not answer within " +
                                  std::to_string(timeout_ms / 1000) + " s");
      return false;
    }
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

bool ControlConnection::receive_unless(control::Message& m, const volatile std::sig_atomic_t* interrupted) {
  for (;;) {
    const size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      m = control::parse(std::string_view(buffer_).substr(0, nl));
      buffer_.erase(0, nl + 1);
      return true;
    }
    if (*interrupted) return false;
    pollfd p{fd_, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    if (ready < 0) return false;
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

control::Message ControlConnection::ask(const control::Message& m) {
  send(m);
  control::Message answer;
  if (!receive(answer)) throw Error(who_ + ": " + describe(pid_) + " closed the control channel without an answer");
  if (answer.verb == "error") throw Error(who_ + ": " + describe(pid_) + ": " + answer.get("why", "refused"));
  return answer;
}

control::Message process_status(long pid, const std::string& who) {
  ControlConnection c(pid, who);
  return c.ask({"status", {}});
}

}  // namespace gpuscope::cli
