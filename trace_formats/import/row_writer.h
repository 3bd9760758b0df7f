// Bulk row inserts for importers. store::Writer builds a lookup key per row,
// which is fine for the collector's batches but costs too much at millions of
// rows per second; this keeps one prepared statement per table and binds the
// same row structs (store/rows.h) directly. Strings are still interned by the
// Writer so ids stay consistent with every other writer of the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/schema.h"
#include "store/rows.h"
#include "store/writer.h"

namespace gpuscope::formats {

class RowWriter {
 public:
  explicit RowWriter(store::Writer& w) : w_(w) {}

  template <class Row> void add(const Row& row) { write(row, statement(Row::kTable, false)); }
  // INSERT OR REPLACE, for tables keyed by a natural key.
  template <class Row> void put(const Row& row) { write(row, statement(Row::kTable, true)); }

  int64_t rows() const { return rows_; }
  store::Writer& writer() { return w_; }

 private:
  struct Entry {
    const char* table;  // kTable's literal: pointer identity is enough
    bool replace;
    store::Statement st;
  };

  store::Statement& statement(std::string_view table, bool replace) {
    for (auto& e : entries_)
      if (e.table == table.data() && e.replace == replace) return e.st;
    const schema::Table* t = schema::find_table(table);
    if (!t) throw Error("no table " + std::string(table) + " in the schema");
    std::string sql = schema::insert_sql(*t);
    if (replace) sql.replace(0, 6, "INSERT OR REPLACE");
    entries_.push_back({table.data(), replace, w_.connection().prepare(sql)});
    return entries_.back().st;
  }

  struct Binder {
    RowWriter& self;
    store::Statement& st;
    int index = 1;
    void operator()(int64_t v) { st.bind(index++, v); }
    void operator()(double v) { st.bind(index++, v); }
    void operator()(std::string_view v) { st.bind(index++, v); }
    void operator()(store::Interned v) {
      if (v.null)
        st.bind_null(index++);
      else
        st.bind(index++, self.w_.intern(v.text));
    }
  };

  template <class Row> void write(const Row& row, store::Statement& st) {
    Binder b{*this, st};
    row.fields(b);
    st.run();
    ++rows_;
  }

  store::Writer& w_;
  // A linear scan over a dozen entries beats hashing a key per row.
  std::vector<Entry> entries_;
  int64_t rows_ = 0;
};

}  // namespace gpuscope::formats
