// The importer list, content sniffing and the import of one file into a new
// database, shared by `gpuscope import` and open_recording().
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/file_kind.h"
#include "trace_formats/common/text.h"
#include "trace_formats/import/importer.h"
#include "trace_formats/import/torch_import.h"

namespace gpuscope::formats {
namespace {

// Every SQLite database starts with these 16 bytes (the terminating NUL included).
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

std::string raw_head(const std::string& path, size_t n) {
  std::string head;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return head;
  head.resize(n);
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, head.data() + got, n - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

}  // namespace

const std::vector<const Importer*>& importers() {
  static const std::vector<const Importer*> list = {
      &torch_profiler_importer(),
  };
  return list;
}

Sniffed sniff_file(const std::string& path) {
  Sniffed s;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return s;
  const std::string raw = raw_head(path, kSqliteMagic.size());
  if (raw.starts_with(kSqliteMagic)) {
    s.recording = true;
    return s;
  }
  if (raw.empty()) return s;
  s.gzipped = raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b;
  std::string head(kSniffBytes, '\0');
  size_t got = 0;
  try {
    auto src = ByteSource::open_file(path);
    while (got < head.size()) {
      const size_t n = src->read(head.data() + got, head.size() - got);
      if (n == 0) break;
      got += n;
    }
  } catch (const Error&) {
    // Short gzip data inflates as far as it goes; data that does not inflate
    // at all is no format of ours, and the gzip reader's reason says so.
    if (s.gzipped && got == 0) throw;
  }
  head.resize(got);
  for (const Importer* importer : importers())
    if (importer->sniff(head)) {
      s.importer = importer;
      break;
    }
  return s;
}

ImportResult import_with(const Importer& importer, const std::string& trace_path, const std::string& db_path,
                         const ImportOptions& options) {
  check_outputs({db_path}, {trace_path}, options.force);
  auto src = ByteSource::open_file(trace_path);
  // A fresh private file renamed into place at the end; Ctrl-C leaves nothing.
  AtomicFile out(db_path, AtomicFile::Kind::kSqlite,
                 options.force ? AtomicFile::Existing::kReplace : AtomicFile::Existing::kRefuse);
  out.close();
  ImportResult r;
  try {
    r = importer.import(*src, out.temp_path(), options);
  } catch (const Error& e) {
    // SQLite names the file it writes, the hidden temporary one: name the output.
    std::string why = e.what();
    for (size_t p = why.find(out.temp_path()); p != std::string::npos; p = why.find(out.temp_path(), p + db_path.size()))
      why.replace(p, out.temp_path().size(), db_path);
    throw Error(why);
  }
  // Journals of an earlier file of this name would be read as ours; without
  // --force nothing is touched until the name is ours.
  std::error_code ec;
  auto remove_side_files = [&] {
    for (const char* suffix : {"-wal", "-shm", "-journal"}) std::filesystem::remove(db_path + suffix, ec);
  };
  if (options.force) remove_side_files();
  out.commit();
  if (!options.force) remove_side_files();
  return r;
}

ImportResult import_trace(const std::string& trace_path, const std::string& db_path, const ImportOptions& options) {
  check_outputs({db_path}, {trace_path}, options.force);
  const Sniffed s = sniff_file(trace_path);
  if (s.recording)
    throw Error(trace_path + ": already an SQLite database (a gpuscope recording?); nothing to import");
  if (auto why = file_kind_problem(trace_path, false)) throw Error(trace_path + ": " + *why);
  return import_with(s.importer ? *s.importer : *importers().front(), trace_path, db_path, options);
}

std::string import_summary(const ImportResult& r) {
  const ImportCounts& c = r.counts;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%lld events in %.2f s (%.0f MB/s): %lld kernels, %lld memcpys, %lld memsets, %lld API calls, "
                "%lld ops, %lld ranges, %lld steps, %lld memory events, %lld counters, %lld syncs",
                (long long)c.events, r.seconds, r.seconds > 0 ? double(r.read.bytes) / 1e6 / r.seconds : 0.0,
                (long long)c.kernels, (long long)c.memcpys, (long long)c.memsets, (long long)c.api_calls,
                (long long)c.ops, (long long)c.ranges, (long long)c.steps, (long long)c.memory_events,
                (long long)c.counters, (long long)c.syncs);
  std::string s = buf;
  if (!c.unknown.empty()) {
    s += "; unknown categories, not imported:";
    for (const auto& [cat, n] : c.unknown)
      s += " " + (cat.empty() ? std::string("\"\"") : terminal_safe(cat)) + " " + std::to_string(n);
  }
  return s;
}

std::string import_dropped_line(const ImportResult& r) {
  int64_t total = 0;
  std::string why;
  for (const auto& [reason, n] : r.counts.dropped) {
    total += n;
    why += (why.empty() ? "" : ", ") + reason + " " + std::to_string(n);
  }
  if (total == 0) return {};
  return "dropped " + std::to_string(total) + " of " + std::to_string(r.counts.events) + " events: " + why;
}

}  // namespace gpuscope::formats
