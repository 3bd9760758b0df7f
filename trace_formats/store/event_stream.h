// The recording's events as one stream that every consumer visits: the
// Chrome, Perfetto and TensorBoard exporters and the viewer's loader, in the
// manner of Kineto's ActivityLogger. A consumer is a visitor with, for each
// kind of the stream, one method and one declaration of what it reads:
//
//   struct Writer {
//     static events::Columns<rec::Kernel, kKernelRead, kKernelLeftOut> columns(events::Tag<rec::Kernel>);
//     void on(const rec::Kernel& k);
//     ...  // the same pair for every kind of events::Kinds
//   };
//   events::visit_all(db, writer, {.pid = 42});
//
// So that a new kind is one method per consumer and no consumer forgets one,
// a kind added to Kinds stops every consumer that lacks its pair from
// compiling (the Visitor concept), and a column added to a table stops every
// consumer that does not say whether it reads it or leaves it out (Columns'
// static_assert, store/coverage.h). The columns are fixed at compile time, so
// the driver reads exactly them through store::Select, with no dispatch a
// column (the viewer's loads of millions of rows).
//
// Optional members of a visitor, found when present:
//   bool on(const R&)                  return false to stop the scan (the viewer's cancel)
//   static constexpr std::string_view order(Tag<R>)
//                                      ORDER BY of kind R's rows; without it they come
//                                      in the table's order (rowid), which the exporters'
//                                      outputs and goldens depend on
//   void before(Tag<R>)                visit_all calls it before kind R's rows: a
//                                      consumer's phases between kinds (the Chrome
//                                      export plans its rows once the steps are known)
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "trace_formats/store/coverage.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/records.h"

namespace gpuscope::store::events {

template <class... Rs>
struct KindList {};

// The kinds, in the order visit_all passes them. Steps first: consumers lay
// the other events out around them (the Chrome export's ProfilerStep rows
// decide which host events move to an overlap row before any is written).
// Graph launches are no kind: no consumer draws them (an import derives them
// from the kernels' graph ids), and the Chrome export says so in its
// coverage (chrome_columns.h).
using Kinds = KindList<rec::Step, rec::Op, rec::Range, rec::ApiCall, rec::Kernel, rec::Memcpy, rec::Memset,
                       rec::Sync, rec::MemoryEvent, rec::Counter>;

// Selects a visitor's overload for kind R.
template <class R>
struct Tag {
  using Record = R;
};

// The empty column list, for a kind whose every column is read.
template <class R>
inline constexpr std::array<typename R::Column, 0> kNone{};

// What a consumer reads of kind R: the columns `Read`, which the driver
// selects and nothing else, and `LeftOut`, the ones it leaves out on purpose.
template <class R, const auto& Read, const auto& LeftOut = kNone<R>>
struct Columns {
  static_assert(std::size(Read) > 0, "event stream: a consumer reads at least one column of each kind");
  static_assert(covers<R>(Read, LeftOut),
                "event stream: the consumer neither reads nor leaves out some column of this table (or names one "
                "twice): add it to the consumer's Read or LeftOut list of the kind");
  using Record = R;
  using Select = SelectOf<R, Read>;
  static constexpr std::span<const typename R::Column> read{Read};
  static constexpr std::span<const typename R::Column> left_out{LeftOut};
};

// The Columns a visitor declares for kind R.
template <class V, class R>
using ColumnsOf = decltype(V::columns(Tag<R>{}));

template <class V, class R>
concept VisitsKind = requires(V& v, const R& row) {
  typename ColumnsOf<V, R>::Select;
  v.on(row);
} && std::same_as<typename ColumnsOf<V, R>::Record, R>;

template <class V, class L>
struct VisitsAll;
template <class V, class... Rs>
struct VisitsAll<V, KindList<Rs...>> : std::bool_constant<(VisitsKind<V, Rs> && ...)> {};

// Every kind of the stream has its method and its column declaration.
template <class V>
concept Visitor = VisitsAll<V, Kinds>::value;

namespace detail {
// The driver's check: unlike the concept's, its error names the kind missing.
template <class V, class R>
consteval bool visits_kind() {
  static_assert(VisitsKind<V, R>,
                "event stream: the visitor lacks on(const R&) or columns(Tag<R>) for the kind R the notes name");
  return true;
}
template <class V, class... Rs>
consteval bool visits_all(KindList<Rs...>) {
  return (visits_kind<V, Rs>() && ...);
}
}  // namespace detail

// Which rows of each kind: all of them, one process's, rows whose id lies
// in [ids->first, ids->second] (the viewer reads a table in id ranges on
// several threads), or both.
struct Scan {
  std::optional<int64_t> pid = std::nullopt;
  std::optional<std::pair<int64_t, int64_t>> ids = std::nullopt;
};

// FROM-tail of a scan: " WHERE pid=N" as the exporters have always written
// it (the same text gives the same plan, hence the same row order), the id
// range as ?1 and ?2, then the visitor's order.
inline std::string scan_sql(const Scan& scan, std::string_view order) {
  std::string sql;
  if (scan.pid) sql = " WHERE pid=" + std::to_string(*scan.pid);
  if (scan.ids) sql += scan.pid ? " AND id BETWEEN ?1 AND ?2" : "WHERE id BETWEEN ?1 AND ?2";
  if (!order.empty()) sql += " ORDER BY " + std::string(order);
  return sql;
}

// Visits kind R's rows of `scan`; false when the visitor stopped the scan.
template <class R, class V>
bool visit(Connection& db, V& v, const Scan& scan = {}) {
  static_assert(detail::visits_all<V>(Kinds{}));
  std::string_view order;
  if constexpr (requires { V::order(Tag<R>{}); }) order = V::order(Tag<R>{});
  typename ColumnsOf<V, R>::Select rows(db, scan_sql(scan, order));
  if (scan.ids) rows.bind(1, scan.ids->first).bind(2, scan.ids->second);
  while (rows.next()) {
    if constexpr (std::is_same_v<decltype(v.on(rows.row())), bool>) {
      if (!v.on(rows.row())) return false;
    } else {
      v.on(rows.row());
    }
  }
  return true;
}

namespace detail {
template <class V, class... Rs>
bool visit_kinds(Connection& db, V& v, const Scan& scan, KindList<Rs...>) {
  auto one = [&]<class R>(Tag<R> tag) {
    if constexpr (requires { v.before(tag); }) v.before(tag);
    return visit<R>(db, v, scan);
  };
  return (one(Tag<Rs>{}) && ...);
}
}  // namespace detail

// Visits every kind in the order of Kinds; false when the visitor stopped.
template <class V>
bool visit_all(Connection& db, V& v, const Scan& scan = {}) {
  return detail::visit_kinds(db, v, scan, Kinds{});
}

// What `consumer` (a visitor) reads and leaves out of kind R, as data for the
// checks against a schema other than the built one (store::uncovered).
template <class R, class V>
TableUse use(std::string_view consumer) {
  static_assert(detail::visits_all<V>(Kinds{}));
  using C = ColumnsOf<V, R>;
  return table_use<R>(consumer, C::read, C::left_out);
}

// use() of every kind, in the order of Kinds.
template <class V>
std::vector<TableUse> uses(std::string_view consumer) {
  return [&]<class... Rs>(KindList<Rs...>) { return std::vector<TableUse>{use<Rs, V>(consumer)...}; }(Kinds{});
}

}  // namespace gpuscope::store::events
