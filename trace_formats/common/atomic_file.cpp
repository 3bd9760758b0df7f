#include "trace_formats/common/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <utility>

#include "trace_formats/common/error.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

// Temporary files the signal handler removes. A slot is written only while
// its state is kFilling, so the handler never reads a half-written path.
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
enum : int { kFree = 0, kFilling = 1, kReady = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  bool sqlite = false;
  char path[kPathMax];
};
Slot g_slots[kSlots];
const char* const kSqliteSuffixes[] = {"-journal", "-wal", "-shm"};

void unlink_with_suffix(const char* path, const char* suffix) {
  // No allocation: the signal handler calls this.
  char buf[kPathMax + 16];
  size_t n = std::strlen(path), m = std::strlen(suffix);
  if (n + m >= sizeof buf) return;
  std::memcpy(buf, path, n);
  std::memcpy(buf + n, suffix, m + 1);
  ::unlink(buf);
}

void remove_temp(const char* path, bool sqlite) {
  ::unlink(path);
  if (sqlite)
    for (const char* s : kSqliteSuffixes) unlink_with_suffix(path, s);
}

void on_fatal_signal(int sig) {
  const int saved = errno;
  for (auto& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == kReady) remove_temp(s.path, s.sqlite);
  errno = saved;
  // The signal stays blocked until this handler returns; then it ends the
  // process by the default action, as it would have without us.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0) continue;
      // A handler the program installed itself (gpuscope record's) stays.
      if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = on_fatal_signal;
      sigemptyset(&sa.sa_mask);
      for (int other : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, other);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

std::string random_suffix() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(::getpid()) << 32)};
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::lock_guard<std::mutex> lock(mu);
  std::string s(10, 'x');
  for (char& c : s) c = kAlphabet[rng() % (sizeof kAlphabet - 1)];
  return s;
}

std::string normalized(const std::string& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) return p;
  fs::path canon = fs::weakly_canonical(abs, ec);
  return (ec ? abs.lexically_normal() : canon).string();
}

// Moves `from` to `to` only where `to` names nothing (no file, directory or
// symlink, dangling or not), in one step that another process cannot slip
// between: renameat2's RENAME_NOREPLACE, or a hard link where the file system
// lacks it. Throws Error naming `to`.
void move_into_free_name(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return;
  int err = errno;
  if (err == EINVAL || err == ENOSYS || err == EOPNOTSUPP) {
    if (::link(from.c_str(), to.c_str()) == 0) {
      ::unlink(from.c_str());
      return;
    }
    err = errno;
    if (err == EPERM || err == EOPNOTSUPP) {
      // Neither (a FAT or some FUSE file system): the best left is a check
      // just before the rename.
      struct stat st {};
      if (::lstat(to.c_str(), &st) == 0) throw Error(exists_message(to));
      if (std::rename(from.c_str(), to.c_str()) == 0) return;
      err = errno;
    }
  }
  if (err == EEXIST) throw Error(exists_message(to));
  throw Error(to + ": cannot move the finished file into place: " + std::strerror(err));
}

}  // namespace

std::string exists_message(const std::string& path) { return path + ": already exists; use --force to overwrite"; }

int register_temp_path(const std::string& path, bool sqlite_side_files) {
  if (path.size() + 1 > kPathMax) return -1;
  install_handlers();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].sqlite = sqlite_side_files;
    g_slots[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temp_path(int slot) {
  if (slot >= 0 && slot < kSlots) g_slots[slot].state.store(kFree, std::memory_order_release);
}

void unregister_temp_path(const std::string& path) {
  for (auto& s : g_slots) {
    int expected = kReady;
    if (s.state.load(std::memory_order_acquire) != kReady || path != s.path) continue;
    s.state.compare_exchange_strong(expected, kFree);
  }
}

AtomicFile::AtomicFile(std::string target, Kind kind, Existing existing)
    : target_(std::move(target)), kind_(kind), existing_(existing) {
  fs::path p(target_);
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  // A hidden name in the target's folder (so the rename stays on one file
  // system), cut so that it fits NAME_MAX.
  std::string base = p.filename().string().substr(0, 200);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string candidate = (dir / ("." + base + "." + random_suffix() + ".tmp")).string();
    // Blocked until registered, so a signal cannot land between the two.
    sigset_t block, old;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    const int err = errno;
    if (fd >= 0) {
      temp_ = candidate;
      fd_ = fd;
      slot_ = register_temp_path(temp_, kind_ == Kind::kSqlite);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (fd >= 0) return;
    if (err != EEXIST) throw Error(target_ + ": cannot create a file in " + dir.string() + ": " + std::strerror(err));
  }
  throw Error(target_ + ": cannot create a temporary file in " + dir.string() + ": every name tried exists");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) remove_temp(temp_.c_str(), kind_ == Kind::kSqlite);
  unregister_temp_path(slot_);
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0) throw Error(target_ + ": write after close");
  const char* p = data.data();
  size_t n = data.size();
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw Error(target_ + ": write failed: " + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void AtomicFile::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) throw Error(target_ + ": write failed: " + std::strerror(errno));
}

void AtomicFile::commit() {
  close();
  if (kind_ == Kind::kSqlite)
    for (const char* s : kSqliteSuffixes) unlink_with_suffix(temp_.c_str(), s);
  if (existing_ == Existing::kReplace) {
    if (std::rename(temp_.c_str(), target_.c_str()) != 0)
      throw Error(target_ + ": cannot rename the finished file into place: " + std::strerror(errno));
  } else {
    move_into_free_name(temp_, target_);
  }
  committed_ = true;
  unregister_temp_path(std::exchange(slot_, -1));
}

void write_file_atomically(const std::string& path, const std::string& text, bool force) {
  AtomicFile f(path, AtomicFile::Kind::kPlain, force ? AtomicFile::Existing::kReplace : AtomicFile::Existing::kRefuse);
  f.write(text);
  f.commit();
}

void check_outputs(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs, bool force) {
  struct Id {
    std::string path;
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    bool same(const Id& o) const { return path == o.path || (exists && o.exists && dev == o.dev && ino == o.ino); }
  };
  auto id_of = [](const std::string& p) {
    Id id;
    id.path = normalized(p);
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) {
      id.exists = true;
      id.dev = st.st_dev;
      id.ino = st.st_ino;
    }
    return id;
  };
  std::vector<Id> ins;
  for (const auto& i : inputs)
    if (!i.empty() && i != "-") ins.push_back(id_of(i));
  std::vector<Id> outs;
  bool stdout_named = false;
  for (const auto& o : outputs) {
    if (o.empty()) continue;
    if (o == "-") {
      if (stdout_named) throw Error("-: only one output can go to stdout");
      stdout_named = true;
      continue;
    }
    Id id = id_of(o);
    for (const auto& in : ins)
      if (id.same(in)) throw Error(o + ": is an input of this command; an output never replaces an input (not even with --force)");
    for (const auto& prev : outs)
      if (id.same(prev)) throw Error(o + ": named for two outputs");
    outs.push_back(id);
    struct stat st {};
    if (::lstat(o.c_str(), &st) == 0) {
      struct stat to {};
      if (S_ISDIR(st.st_mode) || (S_ISLNK(st.st_mode) && ::stat(o.c_str(), &to) == 0 && S_ISDIR(to.st_mode)))
        throw Error(o + ": is a directory");
      if (!force) throw Error(exists_message(o));
    }
  }
}

}  // namespace gpuscope
