// Running the real gpuscope binary from the CLI tests: a scratch folder, a
// command line with its output and exit status, and folder listings.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include "tests/support/files.h"

namespace gpuscope::cli::test {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::string(GPUSCOPE_BINARY_DIR) + "/cli_test_tmp/" + std::to_string(::getpid()) + "_" +
            std::to_string(counter++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    if (!std::getenv("GPUSCOPE_KEEP_TMP")) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

struct Result {
  int exit_code = -1;   // -1 when ended by a signal
  int signal = 0;
  std::string output;   // stdout and stderr together
  int lines() const { return static_cast<int>(std::count(output.begin(), output.end(), '\n')); }
  bool has(const std::string& s) const { return output.find(s) != std::string::npos; }
};

inline Result run(const std::string& command) {
  Result r;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  // `sh -c` reports a child ended by signal N as 128+N.
  if (r.exit_code > 128 && r.exit_code < 160) r.signal = r.exit_code - 128;
  return r;
}

inline std::string bin() { return std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope"; }
inline Result gpuscope(const std::string& args) { return run(bin() + " " + args); }
inline std::string data(const std::string& name) { return std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/" + name; }

// A recording kept compressed in tests/data (NAME.zst), unpacked with the zstd
// tool into the temp folder once per test process; returns the unpacked path.
inline std::string unpacked_data(const std::string& name) {
  const std::string out = (fs::temp_directory_path() / ("gpuscope_cli_" + std::to_string(::getpid()) + "_" + name)).string();
  if (!fs::exists(out)) {
    const Result r = run("zstd -q -d -f " + data(name + ".zst") + " -o " + out);
    if (r.exit_code != 0) throw std::runtime_error("cannot unpack " + data(name + ".zst") + ": " + r.output);
  }
  return out;
}

using test_support::read_file;
using test_support::write_file;

inline std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace gpuscope::cli::test
