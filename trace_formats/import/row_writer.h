// Bulk row inserts for importers, through store::Writer, which stages rows and
// writes 64 per statement (store/row_batch.h), INSERT OR REPLACE for keyed
// tables such as external_correlation. Strings are interned by the Writer so
// ids stay consistent with every other writer of the file.
#pragma once


#include "trace_formats/common/error.h"
#include "trace_formats/store/rows.h"
#include "trace_formats/store/writer.h"

namespace gpuscope::formats {

class RowWriter {
 public:
  explicit RowWriter(store::Writer& w) : w_(&w) {}
  // Drops every row and interns nothing: for a mapper run only for its state
  // (origin_lookahead.h).
  RowWriter() = default;

  template <class Row> void add(const Row& row) {
    if (w_) w_->add(row);
    ++rows_;
  }
  // INSERT OR REPLACE, for tables keyed by a natural key.
  template <class Row> void put(const Row& row) {
    if (w_) w_->put(row);
    ++rows_;
  }

  int64_t rows() const { return rows_; }
  store::Writer& writer() {
    if (!w_) throw Error("RowWriter: a discarding writer has no database");
    return *w_;
  }

 private:
  store::Writer* w_ = nullptr;
  int64_t rows_ = 0;
};

}  // namespace gpuscope::formats
