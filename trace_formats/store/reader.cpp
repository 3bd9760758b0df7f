#include "trace_formats/store/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "trace_formats/common/file_kind.h"
#include "trace_formats/common/text.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/live.h"
#include "trace_formats/store/schema_check.h"

namespace gpuscope::store {

std::optional<std::string> meta_value(Connection& db, std::string_view key) {
  Statement st = db.prepare("SELECT value FROM meta WHERE key=?1");
  st.bind(1, key);
  if (!st.step()) return std::nullopt;
  return std::string(st.text(0));
}

void check_schema_version(Connection& db) {
  std::optional<std::string> v;
  try {
    v = meta_value(db, meta_key::kSchemaVersion);
  } catch (const Error&) {
    throw Error(db.path() + ": not a gpuscope recording (no meta table)");
  }
  if (!v) throw Error(db.path() + ": not a gpuscope recording (no schema_version)");
  int version = std::atoi(v->c_str());
  if (version > schema::kVersion)
    throw Error(db.path() + ": written by a newer gpuscope (schema v" + std::to_string(version) +
                "); this build reads up to v" + std::to_string(schema::kVersion) + ", upgrade gpuscope");
  if (version < 1) throw Error(db.path() + ": bad schema_version '" + *v + "'");
}


namespace {

const std::string& checked_path(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error(path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (st.st_size == 0) throw Error(path + ": empty file, not a gpuscope recording");
  // SQLite would say "unable to open database file" for every reason.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot read: " + std::strerror(errno));
  ::close(fd);
  return path;
}

// Why SQLite could not read `path`, for its one-line error: what the first
// bytes say the file is (a zstd-compressed recording, an SQLite file cut short
// by a copy, a damaged one) where they say it, else that it is no SQLite file.
// (torch.profiler traces never get here: the commands import those.)
std::string unreadable_reason(const std::string& path, const std::string& sqlite_error) {
  unsigned char head[100] = {};
  size_t got = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    got = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
  }
  static constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: 16 bytes
  if (got == sizeof head && std::equal(kSqliteMagic, kSqliteMagic + sizeof kSqliteMagic, head)) {
    const uint32_t page = (uint32_t{head[16]} << 8) | head[17];
    const uint64_t page_size = page == 1 ? 65536 : page;
    const uint64_t pages = (uint64_t{head[28]} << 24) | (uint64_t{head[29]} << 16) | (uint64_t{head[30]} << 8) | head[31];
    struct stat st {};
    if (pages > 0 && ::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) < page_size * pages)
      return "a truncated SQLite file, " + std::to_string(st.st_size) + " of " + std::to_string(page_size * pages) +
             " bytes (an interrupted copy?)";
    return "a damaged SQLite file (" + sqlite_error + ")";
  }
  if (auto why = file_kind_problem(path)) return *why;
  return "not a gpuscope recording (not an SQLite database)";
}

}  // namespace

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Every SQLite connection using a -shm index holds a read lock on its byte
// 128 (unix VFS, "DMS"); when a write lock is granted, none does.
bool shm_in_use(const std::string& shm) {
  const int fd = ::open(shm.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 128;
  lock.l_len = 1;
  const bool used = ::fcntl(fd, F_SETLK, &lock) != 0;
  ::close(fd);
  return used;
}

// A writer killed with SIGKILL (`gpuscope record` and its job, say) leaves its
// -wal and -shm beside the file. The first reader that may write there and
// finds nobody using them checkpoints the -wal into the file; closing the last
// connection then removes both, and the file reads as any other.
void checkpoint_left_wal(const std::string& path) {
  if (!is_wal_file(path) || !(exists(path + "-wal") || exists(path + "-shm"))) return;
  if (shm_in_use(path + "-shm") || live_writer(path)) return;
  if (!folder_writable(path) || ::access(path.c_str(), W_OK) != 0) return;
  try {
    Connection db(path, Connection::Mode::kReadWrite);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch (const Error&) {
    return;  // read as it stands; opening it says what is wrong
  }
  if (!exists(path + "-wal") && !exists(path + "-shm"))
    std::fprintf(stderr,
                 "gpuscope: note: %s: the -wal and -shm files its writer left when it was killed were checkpointed into "
                 "it and removed\n",
                 terminal_safe(path).c_str());
}

}  // namespace

Reader::SideFiles::SideFiles(const std::string& p) : path(p) {
  checkpoint_left_wal(p);
  struct stat st {};
  had_wal = ::lstat((p + "-wal").c_str(), &st) == 0;
  had_shm = ::lstat((p + "-shm").c_str(), &st) == 0;
}

Reader::SideFiles::~SideFiles() {
  // Only files that appeared while this reader had the recording open, and
  // only when no other connection (a writer that started meanwhile) uses
  // them: SQLite would have removed them itself, had it been allowed to write.
  if ((had_wal && had_shm) || shm_in_use(path + "-shm")) return;
  if (!had_wal) ::unlink((path + "-wal").c_str());
  if (!had_shm) ::unlink((path + "-shm").c_str());
}

Reader::Reader(const std::string& path)
    : side_files_(path), db_(checked_path(path), Connection::Mode::kReadOnly) {
  if (const int64_t unread = db_.unread_wal_bytes())
    std::fprintf(stderr,
                 "gpuscope: warning: %s: its last %lld bytes, in %s-wal, cannot be read in a folder this user "
                 "cannot write; copy both files to a writable folder to read them\n",
                 path.c_str(), static_cast<long long>(unread), path.c_str());
  try {
    db_.query_int("SELECT count(*) FROM sqlite_master");
  } catch (const Error& e) {
    throw Error(path + ": " + unreadable_reason(path, e.what()));
  }
  check_schema_version(db_);
  check_tables(db_);
  version_ = std::atoi(meta_value(db_, meta_key::kSchemaVersion)->c_str());
}

std::string Reader::meta(std::string_view key, std::string_view fallback) {
  return meta_value(db_, key).value_or(std::string(fallback));
}

int64_t Reader::count(std::string_view table) {
  if (!db_.has_table(table)) return 0;
  return db_.query_int("SELECT count(*) FROM \"" + std::string(table) + "\"").value_or(0);
}

const std::vector<std::string>& Reader::strings() {
  if (!strings_loaded_) {
    int64_t max_id = db_.query_int("SELECT max(id) FROM \"string\"").value_or(0);
    strings_.assign(static_cast<size_t>(max_id) + 1, std::string());
    Statement st = db_.prepare("SELECT id, value FROM \"string\"");
    while (st.step()) strings_[static_cast<size_t>(st.int64(0))] = std::string(st.text(1));
    strings_loaded_ = true;
  }
  return strings_;
}

std::string_view Reader::str(int64_t id) {
  const auto& s = strings();
  if (id < 0 || static_cast<size_t>(id) >= s.size()) return {};
  return s[static_cast<size_t>(id)];
}

}  // namespace gpuscope::store
