#include "store/sqlite.h"

#include <utility>

namespace gpuscope::store {
namespace {

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw Error(std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
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

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case Mode::kReadOnly: flags |= SQLITE_OPEN_READONLY; break;
    case Mode::kReadWrite: flags |= SQLITE_OPEN_READWRITE; break;
    case Mode::kCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE; break;
  }
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(path + ": cannot open: " + msg);
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
