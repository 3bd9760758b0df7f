#include "gui/model/details.h"

#include <cstdio>

#include "trace_formats/common/text.h"
#include "gui/model/format.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::gui {
namespace {

// Which enum names a column's codes; empty when it is a plain number.
std::string enum_type(const std::string& table, const std::string& column) {
  if (column == "copy_kind") return "copy_kind";
  if (column == "src_kind" || column == "dst_kind" || column == "mem_kind") return "mem_kind";
  if (column == "domain") return "api_domain";
  if (table == "sync" && column == "type") return "sync_type";
  if (table == "range" && column == "kind") return "range_kind";
  if (table == "range" && column == "source") return "range_source";
  if (table == "memory_event" && column == "source") return "memory_source";
  if (table == "memory_event" && column == "op") return "memory_op";
  return {};
}

bool is_string_column(const std::string& column) {
  return column == "name_id" || column == "domain_id" || column == "shapes_id" ||
         column == "dtypes_id";
}

}  // namespace

DetailsSource::DetailsSource(const std::string& database, std::shared_ptr<const StringTable> strings)
    : reader_(std::make_unique<store::Reader>(database)), strings_(std::move(strings)) {
  using E = store::rec::Enum;
  store::Cursor<E> st(reader_->db(), {E::kType, E::kValue, E::kName});
  while (st.next()) enums_[{std::string(st->type), st->null(E::kValue) ? 0 : st->value}] = std::string(st->name);
}

DetailsSource::~DetailsSource() = default;

std::string DetailsSource::decode(const std::string& table, const std::string& column,
                                  int64_t v) const {
  if (is_string_column(column)) {
    if (strings_ && v >= 0 && static_cast<size_t>(v) < strings_->size())
      return (*strings_)[static_cast<size_t>(v)];
    return "#" + std::to_string(v);
  }
  std::string type = enum_type(table, column);
  if (!type.empty()) {
    auto it = enums_.find({type, v});
    if (it != enums_.end()) return it->second + " (" + std::to_string(v) + ")";
  }
  if (column == "start" || column == "end" || column == "ts")
    return format_time(static_cast<double>(v), 1) + "  (" + std::to_string(v) + " ns)";
  if (column == "color") {
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%08llx", static_cast<unsigned long long>(v) & 0xffffffffULL);
    return buf;
  }
  if (column == "bytes") return format_bytes(static_cast<double>(v)) + "  (" + std::to_string(v) + ")";
  return std::to_string(v);
}

std::vector<DetailField> DetailsSource::fields(const Event& e) {
  std::vector<DetailField> out;
  const std::string table(kind_table(e.kind));
  out.push_back({"kind", std::string(kind_name(e.kind))});
  out.push_back({"duration", format_duration(static_cast<double>(e.duration()))});
  auto st = reader_->query("SELECT * FROM \"" + table + "\" WHERE id = ?");
  st.bind(1, static_cast<int64_t>(e.row));
  if (!st.step()) {
    out.push_back({"row", "not found in " + table});
    return out;
  }
  for (int c = 0; c < st.column_count(); ++c) {
    std::string column = sqlite3_column_name(st.raw(), c);
    std::string value;
    switch (sqlite3_column_type(st.raw(), c)) {
      case SQLITE_NULL: value = "—"; break;
      case SQLITE_INTEGER: value = decode(table, column, st.int64(c)); break;
      case SQLITE_FLOAT: value = std::to_string(st.real(c)); break;
      default: value = std::string(st.text(c)); break;
    }
    if (column == "name_id") column = "name";
    if (column == "domain_id") column = "domain";
    if (column == "shapes_id") column = "shapes";
    if (column == "dtypes_id") column = "dtypes";
    out.push_back({column, value});
  }
  out.push_back({"table", table});
  return out;
}

}  // namespace gpuscope::gui
