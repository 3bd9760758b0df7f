// The Perfetto export says, for every column of the tables it turns into
// events, whether it handles the column or leaves it out on purpose: its
// declared uses cover the built schema, and a column added to a scratch copy
// of the schema is named as forgotten until the export decides about it.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/export/perfetto_writer.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/coverage.h"
#include "tests/trace_formats/store/scratch_schema.h"

namespace gpuscope::formats {
namespace {

using testing::ScratchSchema;

TEST(PerfettoCoverage, DeclaresEveryTableItTurnsIntoEvents) {
  std::vector<std::string_view> tables;
  for (const store::TableUse& u : perfetto_table_uses()) tables.push_back(u.table);
  EXPECT_EQ(tables, (std::vector<std::string_view>{"range", "op", "api_call", "kernel", "memcpy", "memset", "sync",
                                                   "step", "counter", "memory_event"}));
}

TEST(PerfettoCoverage, UsesCoverTheBuiltSchema) {
  EXPECT_EQ(store::uncovered(schema::tables(), perfetto_table_uses()), std::vector<std::string>{});
}

TEST(PerfettoCoverage, AColumnAddedToKernelIsNamedUntilTheExportDecides) {
  ScratchSchema scratch("kernel", "cluster_x");
  EXPECT_EQ(store::uncovered(scratch.tables, perfetto_table_uses()),
            (std::vector<std::string>{"perfetto export: kernel.cluster_x neither handled nor left out"}));
}

TEST(PerfettoCoverage, AColumnAddedToAnyDeclaredTableIsNamed) {
  for (const store::TableUse& u : perfetto_table_uses()) {
    ScratchSchema scratch(u.table, "scratch_column");
    EXPECT_EQ(store::uncovered(scratch.tables, perfetto_table_uses()),
              (std::vector<std::string>{"perfetto export: " + std::string(u.table) +
                                        ".scratch_column neither handled nor left out"}));
  }
}

}  // namespace
}  // namespace gpuscope::formats
