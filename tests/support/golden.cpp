#include "tests/support/golden.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include "tests/support/files.h"

namespace gpuscope::test_support {
namespace {

namespace fs = std::filesystem;


std::string unified_diff(const fs::path& a, const fs::path& b) {
  const std::string cmd = "diff -u '" + a.string() + "' '" + b.string() + "' | head -80";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

}  // namespace

std::string golden_mismatch(const fs::path& expected, const std::string& actual) {
  const fs::path act = expected.string() + ".actual";
  fs::create_directories(expected.parent_path());
  if (std::getenv("GPUSCOPE_UPDATE_GOLDEN")) {
    std::ofstream(expected, std::ios::binary) << actual;
    fs::remove(act);
    return {};
  }
  if (fs::exists(expected) && read_file(expected) == actual) {
    fs::remove(act);
    return {};
  }
  std::ofstream(act, std::ios::binary) << actual;
  if (!fs::exists(expected))
    return expected.string() + " missing; wrote " + act.string() + " (check it, then drop the .actual suffix)";
  return expected.string() + " differs; wrote " + act.string() + " (GPUSCOPE_UPDATE_GOLDEN=1 to accept)\n" +
         unified_diff(expected, act);
}

}  // namespace gpuscope::test_support
