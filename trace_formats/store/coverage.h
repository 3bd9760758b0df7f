// What a consumer that carries whole rows (an exporter, `merge`) does with
// each column of a table it reads: it handles it, or leaves it out on purpose.
// Declared next to the consumer's reads:
//
//   constexpr rec::Kernel::Column kKernelRead[] = {rec::Kernel::kPid, ...};
//   constexpr rec::Kernel::Column kKernelLeftOut[] = {rec::Kernel::kId};  // row key
//   static_assert(store::covers<rec::Kernel>(kKernelRead, kKernelLeftOut));
//
// A column added to schema.cpp grows the generated record, and the
// static_assert fails to compile until the consumer says what it does with the
// column. TableUse is the same declaration as data, for checks against a schema
// other than the built one (tests/trace_formats/store/coverage_test.cpp).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/schema/schema.h"

namespace gpuscope::store {

// Every column of R is in `handled` or `left_out`, and none twice.
template <class R>
consteval bool covers(std::span<const typename R::Column> handled, std::span<const typename R::Column> left_out) {
  int seen[R::kColumnCount] = {};
  for (auto c : handled) ++seen[c];
  for (auto c : left_out) ++seen[c];
  for (int n : seen)
    if (n != 1) return false;
  return true;
}

struct TableUse {
  std::string_view consumer;  // e.g. "chrome export"
  std::string_view table;
  std::vector<std::string_view> handled, left_out;
};

template <class R>
TableUse table_use(std::string_view consumer, std::span<const typename R::Column> handled,
                   std::span<const typename R::Column> left_out) {
  TableUse u{consumer, R::kTable, {}, {}};
  for (auto c : handled) u.handled.push_back(R::kNames[c]);
  for (auto c : left_out) u.left_out.push_back(R::kNames[c]);
  return u;
}

// "<consumer>: <table>.<column> neither handled nor left out" for every column
// of `tables` a use forgets (and for a column it names that the table lacks).
std::vector<std::string> uncovered(std::span<const schema::Table> tables, std::span<const TableUse> uses);

}  // namespace gpuscope::store
