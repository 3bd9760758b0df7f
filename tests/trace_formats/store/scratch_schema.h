// A scratch copy of the schema with one integer column added to a table: what
// a schema change looks like to the consumers' declared uses (store/coverage.h).
#pragma once

#include <string_view>
#include <vector>

#include "trace_formats/schema/schema.h"

namespace gpuscope::testing {

struct ScratchSchema {
  std::vector<std::vector<schema::Column>> columns;
  std::vector<schema::Table> tables;
  ScratchSchema(std::string_view table, std::string_view added) {
    for (const schema::Table& t : schema::tables()) {
      columns.emplace_back(t.columns.begin(), t.columns.end());
      if (t.name == table) columns.back().push_back({added, schema::ColumnType::kInteger, "scratch"});
    }
    for (size_t i = 0; i < columns.size(); ++i) {
      tables.push_back(schema::tables()[i]);
      tables.back().columns = columns[i];
    }
  }
};

}  // namespace gpuscope::testing
