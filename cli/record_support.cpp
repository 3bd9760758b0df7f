#include "cli/record_support.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string_view>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/settings.h"
#include "trace_formats/export/progress.h"
#include "trace_formats/common/text.h"
#include "trace_formats/store/finalize.h"

namespace gpuscope::cli {

void validate_trace_list(const std::string& list) {
  static constexpr std::string_view kSources[] = {"cuda", "nvtx", "memory", "torch", "nvml", "overhead"};
  std::string known;
  for (std::string_view s : kSources) known += (known.empty() ? "" : ",") + std::string(s);
  // `--trace ''` would record nothing at all, `cuda,,nvtx` is a typo: both refused.
  if (list.empty()) throw Error("record: --trace names no source (known: " + known + ")");
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(at, comma - at);
    if (item.empty())
      throw Error("record: --trace '" + list + "' has an empty source between commas (known: " + known + ")");
    if (std::find(std::begin(kSources), std::end(kSources), item) == std::end(kSources))
      throw Error("record: unknown --trace source '" + item + "' (known: " + known + ")");
    at = comma + 1;
  }
}

int claim_output(const std::string& path, bool force) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    AtomicFile fresh(path);
    flock(fresh.fd(), LOCK_EX | LOCK_NB);  // nobody else can see it yet
    if (link(fresh.temp_path().c_str(), path.c_str()) == 0) {
      const int fd = fcntl(fresh.fd(), F_DUPFD_CLOEXEC, 0);
      if (fd < 0) {
        unlink(path.c_str());
        throw Error(path + ": cannot create: " + std::strerror(errno));
      }
      // Stale journals of an earlier file of this name would be read as ours.
      for (const char* suffix : {"-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
      return fd;  // `fresh` removes the temporary name; the file stays under `path`
    }
    if (errno == EPERM || errno == EOPNOTSUPP) {
      // No hard links on this file system: create the name itself, then lock it.
      const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        flock(fd, LOCK_EX | LOCK_NB);
        for (const char* suffix : {"-wal", "-shm", "-journal"}) unlink((path + suffix).c_str());
        return fd;
      }
    }
    if (errno != EEXIST) throw Error(path + ": cannot create: " + std::strerror(errno));
    if (!force) throw Error(path + ": already exists (use --force to overwrite)");
    const int old = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (old < 0 && errno == ENOENT) continue;  // gone meanwhile: claim again
    if (old >= 0) {
      if (flock(old, LOCK_EX | LOCK_NB) != 0) {
        close(old);
        throw Error(path + ": being recorded by another gpuscope record");
      }
      struct stat held {}, named {};
      const bool same = fstat(old, &held) == 0 && lstat(path.c_str(), &named) == 0 &&
                        held.st_dev == named.st_dev && held.st_ino == named.st_ino;
      if (same && S_ISDIR(named.st_mode)) {
        close(old);
        throw Error(path + ": is a directory");
      }
      if (same) unlink(path.c_str());
      close(old);
    } else if (errno == ELOOP) {
      unlink(path.c_str());  // a symlink: replaced, never followed
    } else {
      throw Error(path + ": cannot replace: " + std::strerror(errno));
    }
  }
  throw Error(path + ": taken by another gpuscope record meanwhile");
}

std::string find_collector() {
  if (const char* env = settings::raw(settings::Id::kCollector)) {
    if (!std::filesystem::exists(env))
      throw Error(std::string(env) + ": " + settings::name(settings::Id::kCollector) + " does not exist");
    return std::filesystem::absolute(env).string();
  }
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe").parent_path();
  for (const auto& dir : {self, self / "../lib", self / "../lib/gpuscope"}) {
    auto p = dir / "libgpuscope_collector.so";
    if (std::filesystem::exists(p)) return std::filesystem::canonical(p).string();
  }
  throw Error("record: libgpuscope_collector.so not found next to " + self.string() +
              " or in ../lib (set GPUSCOPE_COLLECTOR)");
}

void finalize_and_report(const std::string& path) {
  const std::string name = terminal_safe(path);
  try {
    formats::Progress progress("gpuscope: linking ops to their API calls and kernels", true);
    const store::Finalized f = store::finalize_recording(
        path, [&](uint64_t done, uint64_t total) { progress.update(done, total, "calls", done); });
    progress.done();
    if (f.unlinked)
      std::fprintf(stderr, "gpuscope: %s: %lld rows shared a CUDA correlation id with others and were unlinked\n",
                   name.c_str(), static_cast<long long>(f.unlinked));
    if (f.placed.steps_placed || f.placed.steps_unplaced)
      std::fprintf(stderr,
                   "gpuscope: %s: ops recorded in some steps only (GPUSCOPE_TORCH_OP_STEPS); %lld ops placed by "
                   "position in %lld steps%s\n",
                   name.c_str(), static_cast<long long>(f.placed.ops), static_cast<long long>(f.placed.steps_placed),
                   f.placed.steps_unplaced
                       ? (", " + std::to_string(f.placed.steps_unplaced) +
                          " steps matched no recorded step and keep their kernels without ops (record --full records "
                          "ops in every step)")
                             .c_str()
                       : "");
    if (f.processes == 0) {
      std::fprintf(stderr, "gpuscope: %s: the job recorded nothing (no CUDA, NVTX or torch activity seen)\n",
                   name.c_str());
      return;
    }
    std::fprintf(stderr,
                 "gpuscope: wrote %s: %lld process(es), %lld kernels, %lld memcpys, %lld API calls, "
                 "%lld ranges, %lld ops, %lld dropped records\n",
                 name.c_str(), (long long)f.processes, (long long)f.kernels, (long long)f.memcpys,
                 (long long)f.api_calls, (long long)f.ranges, (long long)f.ops, (long long)f.dropped);
    if (!f.stopped.empty())
      std::fprintf(stderr, "gpuscope: %s ends before the job did: %s\n", name.c_str(), f.stopped.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "gpuscope: warning: could not finalize %s: %s\n", name.c_str(),
                 terminal_safe(e.what()).c_str());
  }
}

}  // namespace gpuscope::cli
