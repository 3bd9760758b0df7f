// Read access to a gpuscope database for every offline tool (analyzer,
// exporters, viewer, info). Checks that the file is a recording this build reads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// The value of a meta key (trace_formats/schema/meta_keys.h), or nullopt.
std::optional<std::string> meta_value(Connection& db, std::string_view key);

// Throws Error naming the file when meta.schema_version is missing or newer.
void check_schema_version(Connection& db);

class Reader {
 public:
  // Throws Error("<path>: <reason>") for a missing file, a file that is not
  // SQLite, not a gpuscope recording, of a newer schema, or damaged (a table
  // or column of the schema missing: store/schema_check.h).
  explicit Reader(const std::string& path);

  Connection& db() { return db_; }
  Statement query(std::string_view sql) { return db_.prepare(sql); }
  int schema_version() const { return version_; }
  std::string meta(std::string_view key, std::string_view fallback = {});
  int64_t count(std::string_view table);

  // All interned strings, indexed by string.id (loaded on first use).
  const std::vector<std::string>& strings();
  std::string_view str(int64_t id);

 private:
  // Removes the -wal/-shm files SQLite created next to the recording for this
  // reader (a read-only connection cannot); destroyed after db_ is closed.
  struct SideFiles {
    explicit SideFiles(const std::string& path);
    ~SideFiles();
    std::string path;
    bool had_wal = true, had_shm = true;
  };
  SideFiles side_files_;
  Connection db_;
  int version_ = 0;
  std::vector<std::string> strings_;
  bool strings_loaded_ = false;
};

}  // namespace gpuscope::store
