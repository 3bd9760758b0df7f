// Bulk row inserts for importers. Rows of auto-id tables (kernel, api_call,
// op, ...) go through store::Writer::add, which stages them and writes 64 rows
// per INSERT (store/row_batch.h); external_correlation, the one keyed table
// written once per API call, gets the same batching here (replace_batch.h).
// Other keyed rows (process, thread) are few and go through Writer::put.
// Strings are interned by the Writer so ids stay consistent with every other
// writer of the file.
#pragma once

#include <optional>

#include "common/error.h"
#include "import/replace_batch.h"
#include "store/rows.h"
#include "store/writer.h"

namespace gpuscope::formats {

class RowWriter {
 public:
  explicit RowWriter(store::Writer& w) : w_(&w) {
    correlations_.emplace(w.connection(), store::ExternalCorrelationRow::kTable);
  }
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
  void put(const store::ExternalCorrelationRow& row) {
    if (correlations_) correlations_->put(row);
    ++rows_;
  }

  int64_t rows() const { return rows_; }
  // The Writer, with every row staged here written: queries and commit() see them.
  store::Writer& writer() {
    if (!w_) throw Error("RowWriter: a discarding writer has no database");
    correlations_->flush();
    return *w_;
  }

 private:
  store::Writer* w_ = nullptr;
  std::optional<ReplaceBatch<3>> correlations_;
  int64_t rows_ = 0;
};

}  // namespace gpuscope::formats
