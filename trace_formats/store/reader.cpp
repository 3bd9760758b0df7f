#include "store/reader.h"

#include <sys/stat.h>

#include "schema/schema.h"

namespace gpuscope::store {

void check_schema_version(Connection& db) {
  std::optional<std::string> v;
  try {
    v = db.query_text("SELECT value FROM meta WHERE key='schema_version'");
  } catch (const Error&) {
    throw Error(db.path() + ": not a gpuscope recording (no meta table)");
  }
  if (!v) throw Error(db.path() + ": not a gpuscope recording (no schema_version)");
  int version = std::atoi(v->c_str());
  if (version > schema::kVersion)
    throw Error(db.path() + ": written by a newer gpuscope (schema v" + std::to_string(version) +
                "); this build reads up to v" + std::to_string(schema::kVersion) + ", upgrade gpuscope");
  if (version < 1) throw Error(db.path() + ": bad schema_version '" + *v + "'");
}


namespace {

const std::string& checked_path(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error(path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (st.st_size == 0) throw Error(path + ": empty file, not a gpuscope recording");
  return path;
}

}  // namespace

Reader::Reader(const std::string& path) : db_(checked_path(path), Connection::Mode::kReadOnly) {
  try {
    db_.query_int("SELECT count(*) FROM sqlite_master");
  } catch (const Error&) {
    throw Error(path + ": not a gpuscope recording (not an SQLite database)");
  }
  check_schema_version(db_);
  version_ = std::atoi(db_.query_text("SELECT value FROM meta WHERE key='schema_version'")->c_str());
}

std::string Reader::meta(std::string_view key, std::string_view fallback) {
  Statement st = db_.prepare("SELECT value FROM meta WHERE key=?");
  st.bind(1, key);
  if (!st.step()) return std::string(fallback);
  return std::string(st.text(0));
}

int64_t Reader::count(std::string_view table) {
  if (!db_.has_table(table)) return 0;
  return db_.query_int("SELECT count(*) FROM \"" + std::string(table) + "\"").value_or(0);
}

const std::vector<std::string>& Reader::strings() {
  if (!strings_loaded_) {
    int64_t max_id = db_.query_int("SELECT max(id) FROM \"string\"").value_or(0);
    strings_.assign(static_cast<size_t>(max_id) + 1, std::string());
    Statement st = db_.prepare("SELECT id, value FROM \"string\"");
    while (st.step()) strings_[static_cast<size_t>(st.int64(0))] = std::string(st.text(1));
    strings_loaded_ = true;
  }
  return strings_;
}

std::string_view Reader::str(int64_t id) {
  const auto& s = strings();
  if (id < 0 || static_cast<size_t>(id) >= s.size()) return {};
  return s[static_cast<size_t>(id)];
}

}  // namespace gpuscope::store
