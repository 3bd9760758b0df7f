// The row structs of store/rows.h against schema.cpp, by column name: the
// writer binds a row's values by position, so each struct must hand them over
// in its table's column order, under the columns' names.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/rows.h"

namespace gpuscope {
namespace {

template <class Row>
std::vector<std::string> row_names() {
  std::vector<std::string> names;
  Row{}.fields([&](std::string_view name, const auto&) { names.emplace_back(name); });
  return names;
}

// The columns a row supplies: all of its table's but an automatic row key.
std::vector<std::string> table_columns(std::string_view table) {
  std::vector<std::string> names;
  const schema::Table* t = schema::find_table(table);
  if (!t) return names;
  for (size_t i = t->auto_id ? 1 : 0; i < t->columns.size(); ++i) names.emplace_back(t->columns[i].name);
  return names;
}

template <class... Rows>
std::set<std::string> check_rows() {
  std::set<std::string> tables;
  (
      [&] {
        SCOPED_TRACE(std::string(Rows::kTable));
        ASSERT_NE(schema::find_table(Rows::kTable), nullptr);
        EXPECT_EQ(row_names<Rows>(), table_columns(Rows::kTable));
        tables.emplace(Rows::kTable);
      }(),
      ...);
  return tables;
}

TEST(Rows, EveryRowStructNamesItsTablesColumnsInOrder) {
  std::set<std::string> covered =
      check_rows<store::ProcessRow, store::ThreadRow, store::DeviceRow, store::KernelRow, store::MemcpyRow,
                 store::MemsetRow, store::ApiCallRow, store::SyncRow, store::MemoryEventRow, store::GraphLaunchRow,
                 store::RangeRow, store::OpRow, store::ExternalCorrelationRow, store::StepRow, store::CounterRow,
                 store::MessageRow>();
  // The tables the writer fills without a row struct (Writer::set_meta, the
  // DDL's enum rows, Writer::intern, Writer::put_stat); a new table needs one or the other.
  for (const char* t : {"meta", "enum", "string", "collector_stat"}) EXPECT_TRUE(covered.emplace(t).second) << t;
  std::set<std::string> all;
  for (const schema::Table& t : schema::tables()) all.emplace(t.name);
  EXPECT_EQ(covered, all);
}

// The check above fails when a struct swaps two columns, which the writer's
// count of values cannot see.
struct SwappedMemsetRow {
  template <class F> void fields(F&& f) const {
    for (const char* c : {"pid", "device", "context", "stream", "correlation", "start", "end", "value", "bytes",
                          "mem_kind", "graph_id"})
      f(c, int64_t{0});
  }
};

TEST(Rows, ASwappedColumnIsSeen) {
  EXPECT_NE(row_names<SwappedMemsetRow>(), table_columns("memset"));
  EXPECT_EQ(row_names<SwappedMemsetRow>().size(), table_columns("memset").size());
}

}  // namespace
}  // namespace gpuscope
