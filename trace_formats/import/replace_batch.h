// INSERT OR REPLACE rows of an all-integer keyed table (external_correlation:
// one row per API call with an External id), staged and written 64 rows per
// statement. store::Writer batches only auto-id tables; its put() runs one
// statement per row, and callgrind showed that per-execution overhead (VDBE
// start, cursor opens on the table and its key index) as a large share of
// the import. SQLite applies the rows of one multi-row INSERT OR REPLACE in
// order, so the table ends up exactly as with one statement per row.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "schema/schema.h"
#include "store/rows.h"
#include "store/sqlite.h"

namespace gpuscope::formats {

template <int kWidth>
class ReplaceBatch {
 public:
  // 64 rows: far below SQLite's parameter limit for the narrow tables this is for.
  static constexpr int kRows = 64;

  ReplaceBatch(store::Connection& db, std::string_view table) : db_(db), table_(table) {}

  template <class Row> void put(const Row& row) {
    int64_t* v = &values_[static_cast<size_t>(rows_ * kWidth)];
    int i = 0;
    row.fields([&](int64_t x) { v[i++] = x; });
    if (++rows_ == kRows) flush();
  }

  // Writes what is staged; the batch is empty afterwards, also on error.
  void flush() {
    int done = 0;
    struct Clear {
      int& rows;
      ~Clear() { rows = 0; }
    } clear{rows_};
    while (done < rows_) {
      bool full = rows_ - done == kRows;
      Slot& s = full ? many_ : one_;
      if (!s.st.raw()) prepare(s, full ? kRows : 1);
      int count = (full ? kRows : 1) * kWidth;
      const int64_t* v = &values_[static_cast<size_t>(done * kWidth)];
      sqlite3_stmt* raw = s.st.raw();
      // Bindings survive executions: pid and other repeated values are bound once.
      for (int p = 0; p < count; ++p) {
        if (s.bound_valid && s.bound[static_cast<size_t>(p)] == v[p]) continue;
        if (v[p] == store::kNull)
          sqlite3_bind_null(raw, p + 1);
        else
          sqlite3_bind_int64(raw, p + 1, v[p]);
        s.bound[static_cast<size_t>(p)] = v[p];
      }
      s.bound_valid = true;
      s.st.run();
      done += full ? kRows : 1;
    }
  }

 private:
  struct Slot {
    store::Statement st;
    std::array<int64_t, kRows * kWidth> bound{};
    bool bound_valid = false;
  };

  void prepare(Slot& s, int rows) {
    const schema::Table* t = schema::find_table(table_);
    if (!t) throw Error("no table " + std::string(table_) + " in the schema");
    if (static_cast<int>(t->columns.size()) != kWidth || t->auto_id)
      throw Error("table " + std::string(table_) + " does not have " + std::to_string(kWidth) + " columns");
    std::string sql = schema::insert_sql(*t);
    std::string tuple = sql.substr(sql.rfind(" ("));  // " (?, ?, ?)"
    tuple[0] = ',';
    for (int i = 1; i < rows; ++i) sql += tuple;
    sql.replace(0, 6, "INSERT OR REPLACE");
    s.st = db_.prepare(sql, SQLITE_PREPARE_PERSISTENT);
  }

  store::Connection& db_;
  std::string_view table_;
  int rows_ = 0;
  std::array<int64_t, kRows * kWidth> values_{};
  Slot many_, one_;
};

}  // namespace gpuscope::formats
