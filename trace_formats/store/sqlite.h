// Thin RAII wrapper over the SQLite C API: a connection and prepared statements.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "trace_formats/common/error.h"

namespace gpuscope::store {

// Nullable integer columns use this sentinel in row structs.
inline constexpr int64_t kNull = INT64_MIN;

class Statement {
 public:
  Statement() = default;
  // `flags`: sqlite3_prepare_v3 flags, e.g. SQLITE_PREPARE_PERSISTENT for a
  // statement kept for the connection's lifetime.
  Statement(sqlite3* db, std::string_view sql, unsigned flags = 0);
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  void bind(int index, int64_t v);  // kNull binds NULL
  void bind(int index, double v);
  void bind(int index, std::string_view v);
  void bind_null(int index);
  int parameter_count() const { return sqlite3_bind_parameter_count(stmt_); }

  // Returns true while a row is available.
  bool step();
  // Runs a statement that returns no rows, then resets it for reuse.
  void run();
  void reset();

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string_view text(int col) const;
  int column_count() const { return sqlite3_column_count(stmt_); }

  // Result columns by name (an AS alias, else the column's name): resolve the
  // index once with column() before a loop, or read by name where rows are few.
  // Throws Error naming the SQL when the statement has no such column.
  int column(std::string_view name) const;
  int64_t int64(std::string_view name) const { return int64(column(name)); }
  double real(std::string_view name) const { return real(column(name)); }
  bool is_null(std::string_view name) const { return is_null(column(name)); }
  std::string_view text(std::string_view name) const { return text(column(name)); }
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

// How a read-only connection opens a recording without creating files next to
// it. A WAL-mode file with no -wal content, or in a folder this process cannot
// write (where SQLite cannot create the -shm index it needs), is opened with
// SQLite's `immutable=1` (no locks, no -wal or -shm); one whose writer may
// still be live (-wal and -shm there) or whose -wal holds data is opened
// normally. `unread_wal_bytes`: -wal content an immutable open cannot see.
struct ReadOnlyPlan {
  bool immutable = false;
  int64_t unread_wal_bytes = 0;
};
ReadOnlyPlan plan_read_only(const std::string& path, bool folder_writable);
bool folder_writable(const std::string& path);
// Whether the file's header says WAL mode (a recording `record` has finalized is in rollback mode).
bool is_wal_file(const std::string& path);

class Connection {
 public:
  // kReadOnly follows plan_read_only; kImmutable always opens with immutable=1.
  enum class Mode { kReadOnly, kReadWrite, kCreate, kImmutable };
  Connection(const std::string& path, Mode mode);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  void exec(std::string_view sql);
  Statement prepare(std::string_view sql, unsigned flags = 0) { return Statement(db_, sql, flags); }
  // First column of the first row, or nullopt when there is no row.
  std::optional<int64_t> query_int(std::string_view sql);
  std::optional<std::string> query_text(std::string_view sql);
  bool has_table(std::string_view name);
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }
  // Bytes of the -wal a read-only open had to leave unread (see ReadOnlyPlan).
  int64_t unread_wal_bytes() const { return unread_wal_bytes_; }

 private:
  void open(int flags, bool immutable);

  sqlite3* db_ = nullptr;
  std::string path_;
  int64_t unread_wal_bytes_ = 0;
};

}  // namespace gpuscope::store
