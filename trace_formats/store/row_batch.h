// Rows of one table, staged in memory and written with multi-row INSERT (or,
// for tables keyed by a natural key, INSERT OR REPLACE) statements; SQLite
// applies the rows of one statement in order, as one statement per row would. Callgrind on the writer bench: a one-row INSERT pays per
// execution for starting and halting the VDBE, opening the table cursor and
// seeking the last rowid; one statement for 64 rows pays that once, and
// sqlite3_step drops from 5 590 to 3 810 instructions per kernel row (see
// docs/PERFORMANCE.md). Values are copied when staged, so
// a row's string_views may die as soon as Writer::add returns.
// SQLite keeps a statement's bindings across executions, so a parameter whose
// value equals the one bound at the previous execution is not bound again:
// pid, device, context, graph ids, most launch dimensions repeat from row to
// row, and one comparison is far cheaper than a sqlite3_bind call (~80
// instructions).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

class RowBatch {
 public:
  // Rows of the largest statement. 64 rows of the widest table (19 columns)
  // bind 1 216 parameters, far below SQLite's 32 766 (the limit is checked).
  static constexpr int kMaxRows = 64;

  RowBatch(Connection& db, const schema::Table& table, bool replace = false);

  void int64(int64_t v) {
    Value& x = next();
    if (v == kNull) {
      x.kind = Value::kNull;
    } else {
      x.kind = Value::kInt;
      x.bits = v;
    }
  }
  void real(double v) {
    Value& x = next();
    x.kind = Value::kReal;
    x.bits = std::bit_cast<int64_t>(v);
  }
  void null() { next().kind = Value::kNull; }
  void text(std::string_view v);

  // Closes the staged row; throws Error when it has the wrong number of
  // fields (the row is dropped). A full batch is written at once.
  void end_row() {
    if (staged_ != (rows_ + 1) * width_) bad_row();
    if (++rows_ == max_rows_) flush();
  }
  // Drops a row whose staging failed half way.
  void drop_open_row() { staged_ = rows_ * width_; }

  int pending_rows() const { return rows_; }
  // Writes the staged rows in order: the full statement, then 32, 16, ... 1
  // row statements for the remainder. The batch is empty afterwards, also
  // when SQLite fails (the error is thrown).
  void flush();
  // Forgets the staged rows unwritten (their transaction is rolled back).
  void discard() { clear(); }

 private:
  struct Value {
    // kUnbound: a parameter never bound (only in bound_).
    enum Kind : uint8_t { kInt, kReal, kText, kNull, kUnbound };
    Kind kind = kUnbound;
    uint32_t size = 0;  // text bytes
    int64_t bits = 0;   // the integer, the double's bits, or the text's offset in text_
  };
  static constexpr int kLevels = 7;  // statements of 1, 2, 4, ... 64 rows
  static_assert(1 << (kLevels - 1) == kMaxRows);

  Value& next() {
    if (staged_ == capacity_) overflow();
    return values_[staged_++];
  }
  [[noreturn]] void bad_row();
  [[noreturn]] void overflow();
  Statement& statement(int level);
  void clear();

  Connection& db_;
  const schema::Table& table_;
  bool replace_ = false;
  int width_ = 0;     // parameters per row
  int max_rows_ = 0;  // kMaxRows, or fewer where SQLite allows fewer parameters
  int rows_ = 0;      // complete rows staged
  int staged_ = 0;    // values staged, including an open row
  int capacity_ = 0;
  std::unique_ptr<Value[]> values_;
  std::string text_;  // bytes of staged text values, bound SQLITE_STATIC
  std::array<Statement, kLevels> statements_;
  // Per statement, what each parameter holds now (see the comment at the top).
  std::array<std::unique_ptr<Value[]>, kLevels> bound_;
};

}  // namespace gpuscope::store
