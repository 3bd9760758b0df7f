// Bad input through the real CLI: one line naming the file and the problem,
// exit 2, and nothing left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "trace_formats/store/writer.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void expect_one_line_error(const test::RunResult& r, const std::string& file, const std::string& problem) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_NE(r.output.find(file), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(problem), std::string::npos) << r.output;
}

struct BadInput {
  const char* name;
  std::string content;
  const char* problem;
};

TEST(Cli, ImportRejectsBadInputCleanly) {
  std::string small = test::read_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json");
  std::string gz = test::read_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/torch113_cpu_mlp.json.gz");
  std::vector<BadInput> cases = {
      {"empty.json", "", "empty file"},
      {"truncated.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip"},
      {"garbage.json.gz", std::string("\x1f\x8b\x08\x00", 4) + std::string(64, 'x'), "gzip"},
      {"text.json", "this is not json\n", "not valid JSON"},
      {"other.json", R"({"name": "a config file", "values": [1, 2, 3]})", "JSON of another shape"},
      {"numbers.json", "[1, 2, 3]", "not a torch.profiler trace"},
      {"string.json", R"("just a string")", "JSON of another shape"},
      {"events_not_array.json", R"({"traceEvents": {"a": 1}})", "not an array"},
      {"no_events.json", R"({"traceEvents": []})", "no trace events"},
      {"cut.json", small.substr(0, small.size() / 2), "truncated JSON"},
      {"trailing.json", small + "\n{}", "trailing data"},
      {"bad_syntax.json", R"({"traceEvents": [{"ph": "X", "name": "a",}]})", "not valid JSON at byte"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir tmp;
    test::write_file(tmp.file(c.name), c.content);
    auto before = listing(tmp.path());
    test::RunResult r = test::run(test::gpuscope_bin() + " import -q '" + tmp.file(c.name) + "' -o '" +
                                  tmp.file("out.db") + "'");
    expect_one_line_error(r, c.name, c.problem);
    EXPECT_EQ(listing(tmp.path()), before) << "output left behind";
  }
}

// `import -o ''` read and parsed the whole input before failing (issue 50): the
// empty name is refused first, so a trace that is not even JSON is never read.
TEST(Cli, ImportRefusesAnEmptyOutputNameBeforeReading) {
  TempDir tmp;
  test::write_file(tmp.file("text.json"), "this is not json\n");
  auto before = listing(tmp.path());
  test::RunResult r = test::run(test::gpuscope_bin() + " import -q '" + tmp.file("text.json") + "' -o ''");
  expect_one_line_error(r, "--output", "wants a file name, not an empty one");
  EXPECT_EQ(r.output.find("not valid JSON"), std::string::npos) << r.output;
  EXPECT_EQ(listing(tmp.path()), before) << "output left behind";
}

TEST(Cli, ImportAndExportRoundTripThroughTheBinary) {
  TempDir tmp;
  std::string trace = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json";
  test::RunResult imp = test::run(test::gpuscope_bin() + " import '" + trace + "' -o '" + tmp.file("k.db") + "'");
  ASSERT_EQ(imp.exit_code, 0) << imp.output;
  EXPECT_NE(imp.output.find("unknown categories, not imported: a_future_category 1\n"), std::string::npos)
      << imp.output;
  // info works on an imported file.
  test::RunResult info = test::run(test::gpuscope_bin() + " info '" + tmp.file("k.db") + "'");
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("torch.profiler import"), std::string::npos);
  // Refuses to overwrite, then does with --force.
  EXPECT_EQ(test::run(test::gpuscope_bin() + " import '" + trace + "' -o '" + tmp.file("k.db") + "'").exit_code, 2);
  EXPECT_EQ(test::run(test::gpuscope_bin() + " import -f '" + trace + "' -o '" + tmp.file("k.db") + "'").exit_code, 0);

  test::RunResult exp = test::run(test::gpuscope_bin() + " export -q '" + tmp.file("k.db") + "' --chrome '" +
                                  tmp.file("k.json") + "' --perfetto '" + tmp.file("k.pftrace") +
                                  "' --tensorboard '" + tmp.file("tb") + "'");
  ASSERT_EQ(exp.exit_code, 0) << exp.output;
  EXPECT_TRUE(fs::exists(tmp.file("k.json")));
  EXPECT_TRUE(fs::exists(tmp.file("k.pftrace")));
  EXPECT_TRUE(fs::is_directory(tmp.file("tb/k")));  // --run defaults to the database's stem
  test::RunResult again = test::run(test::gpuscope_bin() + " export -q '" + tmp.file("k.db") + "' --chrome '" +
                                    tmp.file("k.json") + "'");
  expect_one_line_error(again, "k.json", "already exists");
  // One existing output: nothing at all is written.
  test::RunResult partial = test::run(test::gpuscope_bin() + " export -q '" + tmp.file("k.db") + "' --chrome '" +
                                      tmp.file("new.json") + "' --perfetto '" + tmp.file("k.pftrace") + "'");
  expect_one_line_error(partial, "k.pftrace", "already exists");
  EXPECT_FALSE(fs::exists(tmp.file("new.json")));
}

TEST(Cli, ImportNamesWhatItDroppedInItsLastLine) {
  TempDir tmp;
  test::write_file(tmp.file("bad.json"), R"({"traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "good", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
{"ph": "X", "cat": "cpu_op", "name": "huge", "pid": 1, "tid": 1, "ts": 1e300, "dur": 5},
{"ph": "X", "cat": "cpu_op", "name": "word", "pid": 1, "tid": 1, "ts": "abc", "dur": 5},
{"ph": "X", "cat": "cpu_op", "name": "back", "pid": 1, "tid": 1, "ts": 20, "dur": -3}]})");
  test::RunResult r = test::run(test::gpuscope_bin() + " import -q '" + tmp.file("bad.json") + "' -o '" +
                                tmp.file("bad.db") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string last = "gpuscope: dropped 3 of 4 events: negative dur 1, ts not a number 1, ts out of range 1\n";
  ASSERT_GE(r.output.size(), last.size());
  EXPECT_EQ(r.output.substr(r.output.size() - last.size()), last) << r.output;
  test::RunResult info = test::run(test::gpuscope_bin() + " info '" + tmp.file("bad.db") + "'");
  EXPECT_EQ(info.output.find("9223372036"), std::string::npos) << info.output;
}

TEST(Cli, ImportProgressLineLastsUntilTheSummary) {
  // On a terminal (script(1) gives one) the line moves on to the finishing
  // stages instead of going blank once the input is read.
  TempDir tmp;
  const std::string trace = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json";
  const std::string cmd = test::gpuscope_bin() + " import " + trace + " -o " + tmp.file("k.db");
  test::RunResult r = test::run("script -qec '" + cmd + "' /dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t finishing = r.output.find("kineto_small.json: read, finishing");
  const size_t writing = r.output.find("kineto_small.json: read, writing the database");
  const size_t summary = r.output.find("gpuscope: imported");
  ASSERT_NE(finishing, std::string::npos) << r.output;
  ASSERT_NE(writing, std::string::npos) << r.output;
  EXPECT_LT(finishing, writing);
  EXPECT_LT(writing, summary);
  EXPECT_NE(r.output.find("\r\033[K", writing), std::string::npos) << "the line is cleared before the summary";
}

TEST(Cli, ExportRejectsBadDatabases) {
  TempDir tmp;
  test::write_file(tmp.file("empty.db"), "");
  test::write_file(tmp.file("text.db"), "not a database at all, just some text to fill the header page");
  {
    store::Writer w(tmp.file("future.db"));
    w.begin();
    w.set_meta("schema_version", "999");
    w.commit();
    w.connection().exec("PRAGMA journal_mode=DELETE");
  }
  // A recording cut short (an interrupted copy) and one still compressed as tests/data keeps them.
  const std::string recording = test::read_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/mlp_h200.db");
  test::write_file(tmp.file("cut.db"), recording.substr(0, 100000));
  test::write_file(tmp.file("packed.db"),
                   test::read_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/models_tiny_mlp.db.zst"));
  const std::string cut = "a truncated SQLite file, 100000 of " + std::to_string(recording.size()) + " bytes";
  struct Case {
    const char* db;
    const char* problem;
  };
  for (const Case& c : {Case{"empty.db", "empty file"}, Case{"text.db", "not a gpuscope recording"},
                        Case{"future.db", "newer gpuscope"}, Case{"missing.db", "no such file"},
                        Case{"cut.db", cut.c_str()}, Case{"packed.db", "compressed with zstd; decompress it first"}}) {
    SCOPED_TRACE(c.db);
    auto before = listing(tmp.path());
    test::RunResult r = test::run(test::gpuscope_bin() + " export -q '" + tmp.file(c.db) + "' --chrome '" +
                                  tmp.file("o.json") + "' --perfetto '" + tmp.file("o.pftrace") + "'");
    expect_one_line_error(r, c.db, c.problem);
    EXPECT_EQ(listing(tmp.path()), before);
  }
  test::RunResult none = test::run(test::gpuscope_bin() + " export '" + tmp.file("future.db") + "'");
  EXPECT_EQ(none.exit_code, 2);
}

}  // namespace
}  // namespace gpuscope::formats
