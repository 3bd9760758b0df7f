#include "collector/ondemand_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace gpuscope::collector::ondemand {

bool send_line(int fd, const std::string& line) {
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = send(fd, line.data() + off, line.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

void reply_error(int fd, const std::string& why) {
  send_line(fd, control::format({"error", {{"why", why}}}));
  close(fd);
}

// One request line, read within two seconds.
bool read_line(int fd, std::string& line) {
  line.clear();
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 2000) <= 0) return false;
    char c[256];
    const ssize_t n = recv(fd, c, sizeof c, 0);
    if (n <= 0) return false;
    line.append(c, static_cast<size_t>(n));
    const size_t nl = line.find('\n');
    if (nl != std::string::npos) {
      line.resize(nl);
      return true;
    }
    if (line.size() > 8192) return false;
  }
}

long long number(const control::Message& m, const char* key, long long fallback) {
  const std::string v = m.get(key);
  if (v.empty()) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  return *end ? fallback : x;
}

double real(const control::Message& m, const char* key) {
  const std::string v = m.get(key);
  return v.empty() ? 0 : std::strtod(v.c_str(), nullptr);
}

Request request_from(const control::Message& m) {
  Request r;
  r.path = m.get("file");
  r.create = m.get("create") == "1";
  r.finalize_here = false;
  r.steps = number(m, "steps", 0);
  r.control = number(m, "control", -1);
  r.start_step = number(m, "start_step", 0);
  r.seconds = real(m, "seconds");
  r.trigger = m.get("trigger", "gpuscope trigger");
  return r;
}

}  // namespace gpuscope::collector::ondemand
