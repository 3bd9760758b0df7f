// Whole files read and written by tests, the one way every test folder does it.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuscope::test_support {

// The bytes of `path`; empty when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Replaces `path` with `bytes`.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

}  // namespace gpuscope::test_support
