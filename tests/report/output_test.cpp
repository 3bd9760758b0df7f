// report/output.h: a command's reports are all written or none is.
#include "report/output.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace_formats/common/error.h"

namespace gpuscope::report {
namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path path = fs::path(testing::TempDir()) / ("report_output_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                                  "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReportOutput, WritesEveryFile) {
  Dir d;
  write_outputs({{d.file("a.md"), "A"}, {"", "skipped"}, {d.file("b.json"), "B"}}, false);
  EXPECT_EQ(read(d.file("a.md")), "A");
  EXPECT_EQ(read(d.file("b.json")), "B");
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path), fs::directory_iterator()), 2);
}

TEST(ReportOutput, OneFailureRemovesTheOthers) {
  Dir d;
  std::ofstream(d.file("taken.json")) << "old";
  EXPECT_THROW(write_outputs({{d.file("a.md"), "A"}, {d.file("taken.json"), "B"}}, false), Error);
  EXPECT_FALSE(fs::exists(d.file("a.md")));
  EXPECT_EQ(read(d.file("taken.json")), "old");
  write_outputs({{d.file("a.md"), "A"}, {d.file("taken.json"), "B"}}, true);
  EXPECT_EQ(read(d.file("taken.json")), "B");
}

}  // namespace
}  // namespace gpuscope::report
