// A database path in the temp directory, unique to this test process, with
// any file (and -wal/-shm) an earlier run left there removed.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace gpuscope::testing {

inline std::string fresh_temp_db(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()) + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + suffix);
  return p.string();
}

}  // namespace gpuscope::testing
