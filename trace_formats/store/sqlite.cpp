#include "trace_formats/store/sqlite.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

namespace gpuscope::store {
namespace {

// Names the file: a damaged page is found by a query long after the open.
[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  std::string where = file && *file ? std::string(file) + ": " : std::string();
  throw Error(where + std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql, unsigned flags) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), flags, &stmt_, nullptr) != SQLITE_OK)
    fail(db, "cannot prepare `" + std::string(sql.substr(0, 80)) + "`");
}

Statement::Statement(Statement&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), db_(other.db_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    db_ = other.db_;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::bind(int index, int64_t v) {
  if (v == kNull)
    sqlite3_bind_null(stmt_, index);
  else
    sqlite3_bind_int64(stmt_, index, v);
}

void Statement::bind(int index, double v) { sqlite3_bind_double(stmt_, index, v); }

void Statement::bind(int index, std::string_view v) {
  // An empty view may have a null data pointer, which SQLite would bind as NULL.
  sqlite3_bind_text(stmt_, index, v.data() ? v.data() : "", static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

void Statement::bind_null(int index) { sqlite3_bind_null(stmt_, index); }

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "query failed");
}

void Statement::run() {
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) fail(db_, "write failed");
}

void Statement::reset() { sqlite3_reset(stmt_); }

std::string_view Statement::text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

int Statement::column(std::string_view name) const {
  const int n = sqlite3_column_count(stmt_);
  for (int i = 0; i < n; ++i) {
    const char* c = sqlite3_column_name(stmt_, i);
    if (c && name == c) return i;
  }
  const char* sql = sqlite3_sql(stmt_);
  throw Error("no result column '" + std::string(name) + "' in: " + (sql ? sql : "?"));
}

namespace {

int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

std::string immutable_uri(const std::string& path) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).string();
  if (ec) abs = path;
  std::string uri = "file:";
  for (unsigned char c : abs) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "?immutable=1";
}

// SQLite's unix VFS takes no full path longer than 512 bytes (its
// mxPathname; symlinks resolved). This one is that VFS with PATH_MAX instead,
// for reading a finished recording immutable: it opens the main database file
// only, so none of the unix VFS's fixed-size buffers for -wal and -journal
// names is ever filled, and it does not resolve symlinks (which only matters
// for finding those files).
constexpr const char* kLongPathVfs = "gpuscope-long-path";

int long_path_full_pathname(sqlite3_vfs*, const char* name, int size, char* out) {
  std::string full = name;
  if (full.empty() || full[0] != '/') {
    std::error_code ec;
    full = (std::filesystem::current_path(ec) / full).string();
    if (ec) return SQLITE_CANTOPEN;
  }
  if (full.size() + 1 > static_cast<size_t>(size)) return SQLITE_CANTOPEN;
  std::memcpy(out, full.c_str(), full.size() + 1);
  return SQLITE_OK;
}

int long_path_open(sqlite3_vfs* self, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  if (!(flags & SQLITE_OPEN_MAIN_DB) || (flags & SQLITE_OPEN_READWRITE)) return SQLITE_CANTOPEN;
  auto* base = static_cast<sqlite3_vfs*>(self->pAppData);
  return base->xOpen(base, name, file, flags, out_flags);
}

bool register_long_path_vfs() {
  static const bool registered = [] {
    sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    if (!base) return false;
    static sqlite3_vfs vfs = *base;
    vfs.zName = kLongPathVfs;
    vfs.mxPathname = 4096;
    vfs.pNext = nullptr;
    vfs.pAppData = base;
    vfs.xFullPathname = long_path_full_pathname;
    vfs.xOpen = long_path_open;
    return sqlite3_vfs_register(&vfs, 0) == SQLITE_OK;
  }();
  return registered;
}

}  // namespace

// Header bytes 18 and 19 (file format write and read versions) are 2 in WAL mode.
bool is_wal_file(const std::string& path) {
  unsigned char header[20] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, header, sizeof header);
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof header) && header[18] == 2 && header[19] == 2;
}

bool folder_writable(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ::access(dir.empty() ? "." : dir.c_str(), W_OK | X_OK) == 0;
}

ReadOnlyPlan plan_read_only(const std::string& path, bool writable) {
  ReadOnlyPlan plan;
  if (!is_wal_file(path)) return plan;
  const int64_t wal = file_size(path + "-wal"), shm = file_size(path + "-shm");
  if (wal <= 0) {
    // Everything is in the file itself. A live writer keeps -wal and -shm.
    plan.immutable = !(wal == 0 && shm >= 0);
  } else if (!writable && shm < 0) {
    plan.immutable = true;
    plan.unread_wal_bytes = wal;
  }
  return plan;
}

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  switch (mode) {
    case Mode::kReadOnly: {
      const ReadOnlyPlan plan = plan_read_only(path, folder_writable(path));
      open(SQLITE_OPEN_READONLY, plan.immutable);
      unread_wal_bytes_ = plan.unread_wal_bytes;
      if (plan.immutable || !is_wal_file(path)) break;
      // A -wal or -shm this process may not use: read the file without them.
      if (sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK) {
        sqlite3_close_v2(db_);
        db_ = nullptr;
        open(SQLITE_OPEN_READONLY, true);
        unread_wal_bytes_ = std::max<int64_t>(0, file_size(path + "-wal"));
      }
      break;
    }
    case Mode::kImmutable: open(SQLITE_OPEN_READONLY, true); break;
    case Mode::kReadWrite: open(SQLITE_OPEN_READWRITE, false); break;
    case Mode::kCreate: open(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, false); break;
  }
}

void Connection::open(int flags, bool immutable) {
  flags |= SQLITE_OPEN_NOMUTEX;
  std::string name = path_;
  if (immutable) {
    flags |= SQLITE_OPEN_URI;
    name = immutable_uri(path_);
  }
  if (sqlite3_open_v2(name.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    // SQLite's unix VFS opens no file whose full path (symlinks resolved) is
    // longer than its mxPathname, 512, and says only "unable to open".
    std::error_code ec;
    const std::string full = std::filesystem::weakly_canonical(std::filesystem::absolute(path_, ec), ec).string();
    const sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    if (vfs && full.size() >= static_cast<size_t>(vfs->mxPathname)) {
      // Read as it stands (immutable: what a -wal beside it holds is not seen).
      if (!(flags & SQLITE_OPEN_READWRITE) && register_long_path_vfs() &&
          sqlite3_open_v2(immutable_uri(path_).c_str(), &db_, flags | SQLITE_OPEN_URI, kLongPathVfs) == SQLITE_OK) {
        sqlite3_busy_timeout(db_, 10000);
        sqlite3_extended_result_codes(db_, 1);
        return;
      }
      sqlite3_close(db_);
      db_ = nullptr;
      throw Error(path_ + ": cannot open: its full path is " + std::to_string(full.size()) +
                  " characters long, and SQLite writes no file whose path is longer than " +
                  std::to_string(vfs->mxPathname - 1) + "; move or copy it to a folder with a shorter path");
    }
    throw Error(path_ + ": cannot open: " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  sqlite3_extended_result_codes(db_, 1);
}

Connection::~Connection() { sqlite3_close_v2(db_); }

void Connection::exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw Error(path_ + ": " + msg);
  }
}

std::optional<int64_t> Connection::query_int(std::string_view sql) {
  Statement st = prepare(sql);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return st.int64(0);
}

std::optional<std::string> Connection::query_text(std::string_view sql) {
  Statement st = prepare(sql);
  if (!st.step() || st.is_null(0)) return std::nullopt;
  return std::string(st.text(0));
}

bool Connection::has_table(std::string_view name) {
  Statement st = prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?");
  st.bind(1, name);
  return st.step();
}

}  // namespace gpuscope::store
