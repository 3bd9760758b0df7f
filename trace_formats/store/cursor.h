// Typed reads of one table: store::Cursor<rec::Kernel> selects the named
// columns of the table into the generated record (trace_formats/store/records.h,
// written from schema.cpp at build time), so a consumer names columns, never
// positions, and a column added to the schema cannot shift its reads.
//
//   store::Cursor<rec::Kernel> k(db, {rec::Kernel::kStart, rec::Kernel::kEnd}, "WHERE pid=?1");
//   k.bind(1, pid);
//   while (k.next()) busy += k->end - k->start;
//
// Only the named columns are read (SQLite spends most of a scan decoding
// columns); the others keep their defaults. A column the recording's schema
// version predates reads as NULL. Ad-hoc queries (aggregates, joins) read their
// result columns by name with Statement::column() instead.
#pragma once

#include <array>
#include <initializer_list>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_formats/store/records.h"
#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// The names of `table`'s columns in this file (PRAGMA table_info), for the
// columns an older schema version lacks.
std::vector<std::string> file_columns(Connection& db, std::string_view table);

// SELECT <columns, NULL for those the file lacks> FROM "<table>" [alias] <tail>.
std::string select_sql(Connection& db, std::string_view table, std::span<const std::string_view> columns,
                       std::string_view tail, std::string_view alias);

namespace detail {
// What Cursor and Select share: the statement, the record, binds and access.
template <class Derived, class R>
class Rows {
 public:
  template <class V>
  Derived& bind(int index, V value) {
    st_.bind(index, value);
    return static_cast<Derived&>(*this);
  }
  const R& row() const { return row_; }
  const R* operator->() const { return &row_; }
  // Starts over (after new bind()s).
  void reset() { st_.reset(); }
  Statement& statement() { return st_; }

 protected:
  // Steps to the next row and clears the record's null bits; false at the end.
  bool step() {
    if (!st_.step()) return false;
    row_.nulls = 0;
    return true;
  }
  Statement st_;
  R row_;
};
}  // namespace detail

template <class R>
class Cursor : public detail::Rows<Cursor<R>, R> {
 public:
  using Column = typename R::Column;

  // `tail` follows FROM <table> [<alias>]: JOINs, WHERE, ORDER BY, with ?N
  // parameters set by bind(). With an alias, the columns are selected as
  // alias.column (for a tail that joins a table with the same column names).
  Cursor(Connection& db, std::initializer_list<Column> columns, std::string_view tail = {},
         std::string_view alias = {})
      : Cursor(db, std::span<const Column>(columns.begin(), columns.size()), tail, alias) {}
  Cursor(Connection& db, std::span<const Column> columns, std::string_view tail = {}, std::string_view alias = {})
      : columns_(columns.begin(), columns.end()) {
    std::vector<std::string_view> names;
    names.reserve(columns_.size());
    for (Column c : columns_) names.push_back(R::kNames[c]);
    this->st_ = db.prepare(select_sql(db, R::kTable, names, tail, alias));
  }
  // Every column of the table.
  static Cursor all(Connection& db, std::string_view tail = {}) {
    std::vector<Column> every;
    for (int c = 0; c < R::kColumnCount; ++c) every.push_back(static_cast<Column>(c));
    return Cursor(db, std::span<const Column>(every), tail);
  }

  // Reads the next row into row(); false at the end.
  bool next() {
    if (!this->step()) return false;
    sqlite3_stmt* raw = this->st_.raw();
    for (size_t i = 0; i < columns_.size(); ++i) this->row_.read(columns_[i], raw, static_cast<int>(i));
    return true;
  }

 private:
  std::vector<Column> columns_;
};

// A Cursor whose columns are fixed at compile time: next() reads each field
// directly, with no dispatch a column, for the scans of millions of rows (the
// viewer's loaders). Select<rec::Kernel, rec::Kernel::kStart, rec::Kernel::kEnd>,
// or SelectOf<rec::Kernel, kColumns> for a constexpr array of columns.
template <class R, typename R::Column... Cs>
class Select : public detail::Rows<Select<R, Cs...>, R> {
 public:
  static constexpr std::array<typename R::Column, sizeof...(Cs)> kColumns{Cs...};

  explicit Select(Connection& db, std::string_view tail = {}, std::string_view alias = {}) {
    static constexpr std::array<std::string_view, sizeof...(Cs)> kSelected{R::kNames[Cs]...};
    this->st_ = db.prepare(select_sql(db, R::kTable, kSelected, tail, alias));
  }
  bool next() {
    if (!this->step()) return false;
    sqlite3_stmt* raw = this->st_.raw();
    int i = 0;
    (this->row_.template read_at<Cs>(raw, i++), ...);
    return true;
  }
};

namespace detail {
template <class R, const auto& Columns, class Indices = std::make_index_sequence<std::size(Columns)>>
struct SelectOf;
template <class R, const auto& Columns, size_t... Is>
struct SelectOf<R, Columns, std::index_sequence<Is...>> {
  using type = Select<R, Columns[Is]...>;
};
}  // namespace detail
template <class R, const auto& Columns>
using SelectOf = typename detail::SelectOf<R, Columns>::type;

}  // namespace gpuscope::store
