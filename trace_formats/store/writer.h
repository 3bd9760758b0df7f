// Writes rows into a gpuscope database. Not thread-safe: one writer thread
// (collector) or one importer owns it. Several processes may write the same
// file: transactions are BEGIN IMMEDIATE and strings are interned inside them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "schema/schema.h"
#include "store/rows.h"
#include "store/sqlite.h"

namespace gpuscope::store {

class Writer {
 public:
  // Opens `path`, creating it and the schema when missing. Throws Error when the
  // file is not a gpuscope database or has a newer schema.
  explicit Writer(const std::string& path);

  void begin();
  void commit();
  bool in_transaction() const { return in_tx_; }

  int64_t intern(std::string_view text);
  // Sets a meta key only when absent; returns the value now stored.
  std::string meta_default(std::string_view key, std::string_view value);
  void set_meta(std::string_view key, std::string_view value);

  template <class Row> void add(const Row& row) { write(row, statement(Row::kTable, false)); }
  // INSERT OR REPLACE, for rows keyed by a natural key (process, thread, stats).
  template <class Row> void put(const Row& row) { write(row, statement(Row::kTable, true)); }
  void put_stat(int64_t pid, std::string_view key, int64_t value);

  Connection& connection() { return db_; }
  int64_t rows_written() const { return rows_written_; }

 private:
  struct Binder;
  Statement& statement(std::string_view table, bool replace);
  template <class Row> void write(const Row& row, Statement& st);

  Connection db_;
  bool in_tx_ = false;
  int64_t rows_written_ = 0;
  Statement insert_string_, select_string_, put_stat_;
  std::unordered_map<std::string, Statement> statements_;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> strings_;
};

struct Writer::Binder {
  Writer& w;
  Statement& st;
  int index = 1;
  void operator()(int64_t v) { st.bind(index++, v); }
  void operator()(double v) { st.bind(index++, v); }
  void operator()(std::string_view v) { st.bind(index++, v); }
  void operator()(Interned v) {
    if (v.null)
      st.bind_null(index++);
    else
      st.bind(index++, v.id >= 0 ? v.id : w.intern(v.text));
  }
};

template <class Row>
void Writer::write(const Row& row, Statement& st) {
  Binder b{*this, st};
  row.fields(b);
  if (b.index - 1 != st.parameter_count())
    throw Error(std::string("row for table ") + std::string(Row::kTable) + " has " +
                std::to_string(b.index - 1) + " fields, schema has " +
                std::to_string(st.parameter_count()));
  st.run();
  ++rows_written_;
}

}  // namespace gpuscope::store
