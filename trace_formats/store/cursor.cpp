#include "trace_formats/store/cursor.h"

#include <algorithm>

namespace gpuscope::store {

std::vector<std::string> file_columns(Connection& db, std::string_view table) {
  std::vector<std::string> out;
  auto st = db.prepare("SELECT name FROM pragma_table_info(?1)");
  st.bind(1, table);
  const int name = st.column("name");
  while (st.step()) out.emplace_back(st.text(name));
  return out;
}

std::string select_sql(Connection& db, std::string_view table, std::span<const std::string_view> columns,
                       std::string_view tail, std::string_view alias) {
  const std::vector<std::string> present = file_columns(db, table);
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i) sql += ", ";
    if (std::find(present.begin(), present.end(), columns[i]) == present.end()) {
      sql += "NULL";  // added by a later schema version than the file's
      continue;
    }
    if (!alias.empty()) {
      sql += alias;
      sql += '.';
    }
    sql += '"';
    sql += columns[i];
    sql += '"';
  }
  if (columns.empty()) sql += "NULL";
  sql += " FROM \"";
  sql += table;
  sql += '"';
  if (!alias.empty()) {
    sql += ' ';
    sql += alias;
  }
  if (!tail.empty()) {
    sql += ' ';
    sql += tail;
  }
  return sql;
}

}  // namespace gpuscope::store
