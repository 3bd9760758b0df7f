// Shared pieces of the trace-format tests: a synthetic recording built with
// test_support::RecordingBuilder, per-table totals for round-trip checks, and
// running the gpuscope CLI (golden files: tests/support/golden.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include "tests/support/files.h"

namespace gpuscope::formats::test {

// A fresh directory under the test binary folder, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct SyntheticOptions {
  int steps = 2;
  int kernels_per_step = 3;
  bool second_process = true;
};

// A small recording touching every table and every awkward case the
// exporters must survive (names with quotes, backslashes, control bytes and
// invalid UTF-8; unclosed ranges; invalid shapes JSON; peer copies; graphs).
void make_synthetic_db(const std::string& path, const SyntheticOptions& opt = {});
// Adds to a recording one of CUPTI's overhead records as `record --trace
// ...,overhead` stores it: "CUPTI overhead: buffer flush", 1000-51000 ns, on
// the main thread of its first process.
void add_tracer_overhead_range(const std::string& path);

// count(*) and, for tables with start/end, sum(end - start), keyed "table.count"/"table.duration".
std::map<std::string, int64_t> table_totals(const std::string& db_path);


using test_support::read_file;
using test_support::write_file;
std::string gunzip_file(const std::string& path);

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
// Runs a shell command line, capturing its output.
RunResult run(const std::string& command);
// Path of the built gpuscope binary.
std::string gpuscope_bin();

// All files in tests/data with the given suffix (real recordings and traces
// from the GPU machine), sorted.
std::vector<std::string> data_files(const std::string& suffix);

}  // namespace gpuscope::formats::test
