// The one declaration of the gpuscope database schema. The DDL, the version
// constant and docs/schema.md are all generated from the tables below (docs
// are checked by tests/trace_formats/schema/schema_test.cpp); the enum lookup rows come from
// the enums declared in schema/enums.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope::schema {

// Bump when a table or column changes meaning or a column is added. Readers
// refuse newer versions; columns added since a file's version read as NULL.
// v2: sync.wait_stream, sync.event_correlation (stream-wait links).
inline constexpr int kVersion = 2;

// The storage type, and for integers what they hold, so that tools that
// rewrite recordings (`gpuscope merge`) find every time, string-id and pid
// column here instead of in a list of their own. kTime, kStringId and kPid are
// INTEGER in SQL; tests/trace_formats/schema/schema_test.cpp checks each against its doc.
enum class ColumnType {
  kInteger,
  kReal,
  kText,
  kTime,      // ns since meta.origin_ns on the recording's clock
  kStringId,  // string.id
  kPid,       // an operating-system process id
};

struct Column {
  std::string_view name;
  ColumnType type;
  std::string_view doc;
  // The schema version that added it: recordings of older versions lack it,
  // and readers take it as NULL there (store::Reader::has_column).
  int since = 1;
};

struct Table {
  std::string_view name;
  std::string_view doc;
  std::span<const Column> columns;
  // Extra constraint text appended inside CREATE TABLE, e.g. a composite key.
  std::string_view constraints;
  // The first column `id` is an automatic row key, left out of inserts.
  bool auto_id = false;
};

struct EnumValue {
  std::string_view type;
  int value;
  std::string_view name;
};

std::span<const Table> tables();
std::span<const EnumValue> enum_values();
const Table* find_table(std::string_view name);
// Whether recordings of schema `version` have the column (false for an unknown one).
bool has_column(std::string_view table, std::string_view column, int version);

// CREATE TABLE IF NOT EXISTS ... for every table, plus the enum rows.
std::string ddl();
// INSERT INTO <table>(<all columns but an INTEGER PRIMARY KEY id>) VALUES(?...)
std::string insert_sql(const Table& table, bool or_ignore = false);
// The Markdown reference page, docs/schema.md.
std::string markdown();

}  // namespace gpuscope::schema
