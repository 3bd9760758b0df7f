// OutputFile: gzip compressed on a thread of its own gives back exactly what
// was written, however it was cut into pieces, and an uncommitted file leaves
// nothing behind, also while blocks are still queued for compression.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "trace_formats/export/output_file.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// Text zlib compresses well, with a random word now and then so it is not all one run.
std::string sample(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < n) {
    s += "{\"ph\":\"X\",\"name\":\"kernel_";
    s += std::to_string(rng() % 1000);
    s += "\",\"ts\":12345.678},\n";
  }
  s.resize(n);
  return s;
}

TEST(OutputFile, GzipThroughTheThreadGivesBackTheInput) {
  TempDir tmp;
  std::string data = sample(9 << 20, 1);
  OutputFile out(tmp.file("a.json.gz"), false);
  // Tiny, block-sized and larger than the queue: every path of write().
  size_t cuts[] = {1, 7, 1 << 20, 3 << 20, 100, (5 << 20) - 108};
  size_t at = 0;
  for (size_t n : cuts) {
    out.write(std::string_view(data).substr(at, n));
    at += n;
  }
  out.write(std::string_view(data).substr(at));
  EXPECT_EQ(out.bytes_in(), data.size());
  uint64_t bytes = out.commit();
  EXPECT_EQ(bytes, fs::file_size(tmp.file("a.json.gz")));
  EXPECT_LT(bytes, data.size() / 4);
  EXPECT_EQ(test::gunzip_file(tmp.file("a.json.gz")), data);
}

TEST(OutputFile, UncommittedLeavesNothingBehind) {
  TempDir tmp;
  std::string data = sample(6 << 20, 2);
  for (const char* name : {"a.json", "a.json.gz"}) {
    OutputFile out(tmp.file(name), false);
    for (size_t at = 0; at < data.size(); at += 1 << 20) out.write(std::string_view(data).substr(at, 1 << 20));
  }
  EXPECT_TRUE(fs::is_empty(tmp.path()));
}

}  // namespace
}  // namespace gpuscope::formats
