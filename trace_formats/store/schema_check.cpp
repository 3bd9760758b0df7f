#include "trace_formats/store/schema_check.h"

#include <array>
#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

#include "trace_formats/common/error.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::store {
namespace {

// Tables ("table") and columns ("table.column") added to the schema without a
// version bump, which recordings made before may lack: readers must treat
// them as empty. Add one here with the code that reads it that way.
constexpr std::array<std::string_view, 0> kOptional{};

bool optional(std::string_view name) {
  for (std::string_view o : kOptional)
    if (o == name) return true;
  return false;
}

std::string joined(const std::vector<std::string>& names, size_t most) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < most; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > most) s += " and " + std::to_string(names.size() - most) + " more";
  return s;
}

}  // namespace

void check_tables(Connection& db) {
  std::set<std::string, std::less<>> tables;
  {
    Statement st = db.prepare("SELECT name FROM sqlite_master WHERE type='table'");
    while (st.step()) tables.emplace(st.text(0));
  }
  // Columns a later schema version added are absent from older recordings.
  const int version =
      std::atoi(meta_value(db, meta_key::kSchemaVersion).value_or("1").c_str());
  std::vector<std::string> missing_tables, missing_columns;
  for (const schema::Table& t : schema::tables()) {
    if (!tables.count(t.name)) {
      if (!optional(t.name)) missing_tables.emplace_back(t.name);
      continue;
    }
    std::set<std::string, std::less<>> columns;
    Statement st = db.prepare("SELECT name FROM pragma_table_info(?)");
    st.bind(1, t.name);
    while (st.step()) columns.emplace(st.text(0));
    for (const schema::Column& c : t.columns) {
      const std::string qualified = std::string(t.name) + "." + std::string(c.name);
      if (!columns.count(c.name) && !optional(qualified) && c.since <= version) missing_columns.push_back(qualified);
    }
  }
  if (missing_tables.empty() && missing_columns.empty()) return;
  std::string why;
  if (!missing_tables.empty())
    why = (missing_tables.size() == 1 ? "table " : "tables ") + joined(missing_tables, 5) + " missing";
  if (!missing_columns.empty())
    why += (why.empty() ? "" : "; ") + std::string(missing_columns.size() == 1 ? "column " : "columns ") +
           joined(missing_columns, 5) + " missing";
  throw Error(db.path() + ": damaged recording: " + why +
              " (edited by hand or cut short? record it again, or copy it again from where it was made)");
}

}  // namespace gpuscope::store
