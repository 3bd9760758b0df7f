// The Chrome export says what it does with every column of the tables it
// carries (chrome_table_uses(), declared next to its reads): the built schema
// is covered, and a column added to a scratch copy of the schema is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/export/chrome_writer.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/coverage.h"
#include "tests/trace_formats/store/scratch_schema.h"

namespace gpuscope::formats {
namespace {

using testing::ScratchSchema;

TEST(ExportCoverage, ChromeExportCoversTheBuiltSchema) {
  const std::vector<store::TableUse> uses = chrome_table_uses();
  EXPECT_EQ(store::uncovered(schema::tables(), uses), std::vector<std::string>{});
  for (std::string_view table : {"kernel", "memcpy", "memset", "sync", "api_call", "range", "op", "memory_event",
                                 "graph_launch", "counter", "step"})
    EXPECT_EQ(std::count_if(uses.begin(), uses.end(), [&](const store::TableUse& u) { return u.table == table; }), 1)
        << table;
}

TEST(ExportCoverage, AColumnAddedToKernelIsNamedUntilTheChromeExportSaysWhatItDoesWithIt) {
  ScratchSchema scratch("kernel", "cluster_x");
  EXPECT_EQ(store::uncovered(scratch.tables, chrome_table_uses()),
            std::vector<std::string>{"chrome export: kernel.cluster_x neither handled nor left out"});
}

}  // namespace
}  // namespace gpuscope::formats
