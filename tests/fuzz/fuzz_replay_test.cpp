// Without clang's libFuzzer the fuzz target still runs: every input in
// tests/fuzz/corpus (seeds, crash reproducers saved there, what fuzzing
// added) is replayed through the same entry point, plus simple mutations of
// each hand-written seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>
#include "tests/support/files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#ifndef GPUSCOPE_FUZZ_SUITE
#define GPUSCOPE_FUZZ_SUITE FuzzReplay
#endif

namespace {

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(GPUSCOPE_FUZZ_CORPUS))
    if (e.is_regular_file()) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

using gpuscope::test_support::read_file;

void feed(const std::string& s) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

TEST(GPUSCOPE_FUZZ_SUITE, CorpusRunsClean) {
  auto files = corpus();
  ASSERT_GE(files.size(), 5u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    feed(read_file(f));
  }
}

// Inputs that libFuzzer added to the corpus (tests/fuzz/fuzz_slice.sh merges
// them in) are named by their SHA-1: they are replayed as they are, while the
// hand-written seeds are also mutated below, which keeps this test's time
// flat as the corpus grows.
bool found_by_fuzzer(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return name.size() == 40 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(GPUSCOPE_FUZZ_SUITE, TruncationsAndByteFlipsRunClean) {
  // A poor man's fuzzer: every prefix length step and single-byte flips.
  for (const auto& f : corpus()) {
    if (found_by_fuzzer(f)) continue;
    SCOPED_TRACE(f);
    std::string s = read_file(f);
    size_t step = std::max<size_t>(1, s.size() / 97);
    for (size_t n = 0; n < s.size(); n += step) feed(s.substr(0, n));
    uint32_t x = 12345;
    for (int i = 0; i < 200 && !s.empty(); ++i) {
      x = x * 1103515245 + 12345;
      std::string m = s;
      m[(x >> 8) % m.size()] = static_cast<char>(x >> 24);
      feed(m);
    }
  }
}

}  // namespace
