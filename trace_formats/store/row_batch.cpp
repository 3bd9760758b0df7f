#include "trace_formats/store/row_batch.h"

#include <algorithm>
#include <bit>

namespace gpuscope::store {

RowBatch::RowBatch(Connection& db, const schema::Table& table, bool replace)
    : db_(db), table_(table), replace_(replace) {
  width_ = static_cast<int>(table.columns.size()) - (table.auto_id ? 1 : 0);
  int limit = sqlite3_limit(db.raw(), SQLITE_LIMIT_VARIABLE_NUMBER, -1);
  // A power of two, so that any remainder is a sum of the smaller statements.
  max_rows_ = static_cast<int>(std::bit_floor(static_cast<unsigned>(std::clamp(limit / width_, 1, kMaxRows))));
  capacity_ = max_rows_ * width_;
  values_ = std::make_unique<Value[]>(static_cast<size_t>(capacity_));
}

void RowBatch::text(std::string_view v) {
  Value& x = next();
  x.kind = Value::kText;
  x.size = static_cast<uint32_t>(v.size());
  x.bits = static_cast<int64_t>(text_.size());
  text_.append(v);
}

void RowBatch::bad_row() {
  int fields = staged_ - rows_ * width_;
  drop_open_row();
  throw Error("row for table " + std::string(table_.name) + " has " + std::to_string(fields) +
              " fields, schema has " + std::to_string(width_));
}

void RowBatch::overflow() {
  // Only a row wider than the table fills the buffer before end_row().
  drop_open_row();
  throw Error("row for table " + std::string(table_.name) + " has more than " + std::to_string(width_) +
              " fields");
}

Statement& RowBatch::statement(int level) {
  Statement& st = statements_[static_cast<size_t>(level)];
  if (st.raw()) return st;
  std::string sql = schema::insert_sql(table_);
  std::string tuple = sql.substr(sql.rfind(" ("));  // " (?, ?, ...)"
  tuple[0] = ',';
  for (int i = 1; i < (1 << level); ++i) sql += tuple;
  if (replace_) sql.replace(0, 6, "INSERT OR REPLACE");
  st = db_.prepare(sql, SQLITE_PREPARE_PERSISTENT);
  bound_[static_cast<size_t>(level)] = std::make_unique<Value[]>(static_cast<size_t>((1 << level) * width_));
  return st;
}

void RowBatch::flush() {
  int done = 0;
  try {
    while (done < rows_) {
      int level = std::bit_width(static_cast<unsigned>(rows_ - done)) - 1;
      Statement& st = statement(level);
      sqlite3_stmt* raw = st.raw();
      const Value* v = &values_[static_cast<size_t>(done * width_)];
      Value* bound = bound_[static_cast<size_t>(level)].get();
      int count = (1 << level) * width_;
      for (int p = 0; p < count; ++p) {
        const Value& x = v[p];
        Value& b = bound[p];
        // Text is always bound again: its pointer into text_ is stale by now.
        if (x.kind == b.kind && x.kind != Value::kText && (x.kind == Value::kNull || x.bits == b.bits)) continue;
        switch (x.kind) {
          case Value::kInt: sqlite3_bind_int64(raw, p + 1, x.bits); break;
          case Value::kReal: sqlite3_bind_double(raw, p + 1, std::bit_cast<double>(x.bits)); break;
          case Value::kNull:
          case Value::kUnbound: sqlite3_bind_null(raw, p + 1); break;
          case Value::kText:
            // text_ is kept until clear(), after the statement ran.
            sqlite3_bind_text(raw, p + 1, text_.data() + x.bits, static_cast<int>(x.size), SQLITE_STATIC);
            break;
        }
        b = x;
      }
      st.run();
      done += 1 << level;
    }
  } catch (...) {
    clear();
    throw;
  }
  clear();
}

void RowBatch::clear() {
  rows_ = 0;
  staged_ = 0;
  text_.clear();
}

}  // namespace gpuscope::store
