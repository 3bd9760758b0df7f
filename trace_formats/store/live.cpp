#include "trace_formats/store/live.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace gpuscope::store {
namespace {

struct Lock {
  std::string kind;  // FLOCK, POSIX, OFDLCK
  long pid = 0;
  std::string file;  // "maj:min:inode" as /proc/locks writes it
};

// /proc/locks, without the waiters ("->" lines): who holds which lock.
std::vector<Lock> held_locks() {
  std::vector<Lock> out;
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, kind, advisory, mode, file;
    long pid = 0;
    if (!(fields >> id >> kind) || kind == "->") continue;
    if (!(fields >> advisory >> mode >> pid >> file)) continue;
    out.push_back({kind, pid, file});
  }
  return out;
}

std::string lock_file_id(const struct stat& st) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                static_cast<unsigned long long>(st.st_ino));
  return buf;
}

bool runs_the_collector(long pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libgpuscope_collector") != std::string::npos) return true;
  return false;
}

}  // namespace

std::optional<std::string> live_writer(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  bool recording = false;
  if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); fd >= 0) {
    // flock and SQLite's fcntl locks are independent: this sees only record's.
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0) recording = errno == EWOULDBLOCK;
    ::close(fd);  // releases the shared lock, if taken
  }
  const std::vector<Lock> locks = held_locks();
  if (recording) {
    const std::string id = lock_file_id(st);
    for (const Lock& l : locks)
      if (l.kind == "FLOCK" && l.file == id && l.pid > 0) return "gpuscope record, pid " + std::to_string(l.pid);
    return std::string("gpuscope record");
  }
  struct stat shm {};
  if (::stat((path + "-shm").c_str(), &shm) != 0) return std::nullopt;
  const std::string id = lock_file_id(shm);
  for (const Lock& l : locks)
    if (l.kind == "POSIX" && l.file == id && l.pid > 0 && l.pid != ::getpid() && runs_the_collector(l.pid))
      return "the collector in pid " + std::to_string(l.pid);
  return std::nullopt;
}

void wait_until_written(const std::string& path, int poll_ms) {
  while (live_writer(path)) std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
}

}  // namespace gpuscope::store
