// Writes rows into a gpuscope database. Not thread-safe: one writer thread
// (collector) or one importer owns it. Several processes may write the same
// file: transactions are BEGIN IMMEDIATE and strings are interned inside them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/row_batch.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

class Writer {
 public:
  // Opens `path`, creating it and the schema when missing. Throws Error when the
  // file is not a gpuscope database or has a newer schema.
  explicit Writer(const std::string& path);

  void begin();
  // Writes the rows still staged, then commits. When SQLite refuses them the
  // Error is thrown and the transaction stays open; destroying the Writer
  // then rolls it back.
  void commit();
  bool in_transaction() const { return in_tx_; }
  // Drops the staged rows and rolls the open transaction back (SQLite may
  // have done so itself on a failed write). Strings interned in it are
  // forgotten.
  void rollback();

  int64_t intern(std::string_view text);
  // Sets a meta key only when absent; returns the value now stored.
  std::string meta_default(std::string_view key, std::string_view value);
  void set_meta(std::string_view key, std::string_view value);

  // Rows of auto-id tables (kernel, memcpy, ...) added inside a transaction
  // are staged and written in multi-row statements (store/row_batch.h) at the
  // latest by commit(); every table keeps the order of its rows. Outside a
  // transaction each row is written at once, as its own commit.
  template <class Row> void add(const Row& row);
  // INSERT OR REPLACE, for rows keyed by a natural key (process, thread,
  // external_correlation), staged and written like add()'s rows.
  template <class Row> void put(const Row& row);
  void put_stat(int64_t pid, std::string_view key, int64_t value);

  // Writes staged rows first, so that queries on the connection see them (a
  // reference kept from an earlier call does not see rows added since).
  Connection& connection() {
    flush();
    return db_;
  }
  // Rows accepted by add() and put(), staged ones included.
  int64_t rows_written() const { return rows_written_; }

 private:
  struct Binder;
  struct Stager;
  // Per schema table: its statements, prepared on first use, and its batch.
  struct TableSlot {
    const schema::Table* table = nullptr;
    Statement insert;
    std::unique_ptr<RowBatch> batch;    // add(): auto-id tables only
    std::unique_ptr<RowBatch> replace;  // put(), made on first use
  };

  template <class Row> TableSlot& slot() {
    // The slot index is found once per row type; a lookup by name per row
    // cost more than binding the row.
    static const size_t index = table_index(Row::kTable);
    return tables_[index];
  }
  static size_t table_index(std::string_view table);
  Statement& insert_statement(TableSlot& t);
  template <class Row> void write(const Row& row, Statement& st);
  template <class Row> void stage(const Row& row, RowBatch& b);
  void flush();

  Connection db_;
  bool in_tx_ = false;
  int64_t rows_written_ = 0;
  Statement insert_string_, select_string_, put_stat_;
  std::vector<TableSlot> tables_;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> strings_;
};

// Binds a row's fields to a one-row statement.
struct Writer::Binder {
  Writer& w;
  Statement& st;
  int index = 1;
  // Row structs name each column (tests/trace_formats/store/rows_test.cpp checks the names).
  template <class T> void operator()(std::string_view /*column*/, const T& v) { (*this)(v); }
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

// Copies a row's fields into its table's batch.
struct Writer::Stager {
  Writer& w;
  RowBatch& b;
  template <class T> void operator()(std::string_view /*column*/, const T& v) { (*this)(v); }
  void operator()(int64_t v) { b.int64(v); }
  void operator()(double v) { b.real(v); }
  void operator()(std::string_view v) { b.text(v); }
  void operator()(Interned v) {
    if (v.null)
      b.null();
    else
      b.int64(v.id >= 0 ? v.id : w.intern(v.text));
  }
};

template <class Row>
void Writer::stage(const Row& row, RowBatch& b) {
  try {
    row.fields(Stager{*this, b});
  } catch (...) {
    b.drop_open_row();
    throw;
  }
  b.end_row();
  ++rows_written_;
  if (!in_tx_) b.flush();
}

// A table's added and put rows keep their order: staging one kind writes the other's first.
template <class Row>
void Writer::add(const Row& row) {
  TableSlot& t = slot<Row>();
  if (t.replace && t.replace->pending_rows() > 0) t.replace->flush();
  if (!t.batch) {
    write(row, insert_statement(t));
    return;
  }
  stage(row, *t.batch);
}

template <class Row>
void Writer::put(const Row& row) {
  TableSlot& t = slot<Row>();
  if (t.batch && t.batch->pending_rows() > 0) t.batch->flush();
  if (!t.replace) t.replace = std::make_unique<RowBatch>(db_, *t.table, true);
  stage(row, *t.replace);
}

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
