#include "trace_formats/store/coverage.h"

#include <algorithm>

namespace gpuscope::store {

std::vector<std::string> uncovered(std::span<const schema::Table> tables, std::span<const TableUse> uses) {
  std::vector<std::string> out;
  for (const TableUse& u : uses) {
    const auto t = std::find_if(tables.begin(), tables.end(), [&](const schema::Table& x) { return x.name == u.table; });
    const std::string where = std::string(u.consumer) + ": " + std::string(u.table);
    if (t == tables.end()) {
      out.push_back(where + " is not a table of the schema");
      continue;
    }
    auto named = [&](std::string_view c) {
      return std::count(u.handled.begin(), u.handled.end(), c) + std::count(u.left_out.begin(), u.left_out.end(), c);
    };
    for (const schema::Column& c : t->columns)
      if (named(c.name) == 0) out.push_back(where + "." + std::string(c.name) + " neither handled nor left out");
    for (const auto* list : {&u.handled, &u.left_out})
      for (std::string_view c : *list) {
        const bool known = std::any_of(t->columns.begin(), t->columns.end(),
                                       [&](const schema::Column& x) { return x.name == c; });
        if (!known) out.push_back(where + "." + std::string(c) + " is not a column of the table");
        else if (named(c) > 1) out.push_back(where + "." + std::string(c) + " named twice");
      }
  }
  return out;
}

}  // namespace gpuscope::store
