// `gpuscope analyze` on bad input: one line naming the file and the problem,
// exit 2, no partial output; reports for recordings that lack GPU activity.
#include <gtest/gtest.h>


#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "trace_formats/store/sqlite.h"
#include "trace_formats/store/writer.h"
#include "tests/analyzer/scenarios.h"
#include "tests/support/gpuscope_command.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

using Result = CommandResult;

Result gpuscope(const std::string& args) {
  return run_gpuscope(args, temp_db("stderr").substr(0, temp_db("stderr").size() - 3) + ".txt");
}

TEST(AnalyzeCli, MissingFile) { expect_one_line_error(gpuscope("analyze /nonexistent/run.db"), "/nonexistent/run.db: no such file"); }

TEST(AnalyzeCli, NotADatabase) {
  const std::string p = temp_db("text");
  std::ofstream(p) << "hello, not sqlite\n";
  expect_one_line_error(gpuscope("analyze " + p), "not a gpuscope recording");
}

TEST(AnalyzeCli, SqliteButNotARecording) {
  const std::string p = temp_db("foreign");
  fs::remove(p);
  {
    store::Connection c(p, store::Connection::Mode::kCreate);
    c.exec("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES(1);");
  }
  expect_one_line_error(gpuscope("analyze " + p), "not a gpuscope recording");
}

TEST(AnalyzeCli, NewerSchema) {
  const std::string p = temp_db("newer");
  write_scenario("healthy", true, p);
  {
    store::Connection c(p, store::Connection::Mode::kReadWrite);
    c.exec("UPDATE meta SET value='99' WHERE key='schema_version'");
  }
  expect_one_line_error(gpuscope("analyze " + p), "newer gpuscope");
}

TEST(AnalyzeCli, EmptyRecording) {
  const std::string p = temp_db("empty");
  fs::remove(p);
  { store::Writer w(p); }
  expect_one_line_error(gpuscope("analyze " + p), "empty recording");
}

TEST(AnalyzeCli, NoGpuActivityIsAReportNotAnError) {
  const std::string p = temp_db("nogpu");
  write_scenario("no_gpu", true, p);
  Result r = gpuscope("analyze " + p);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no GPU activity recorded: cupti_status=not used"), std::string::npos) << r.out;
}

TEST(AnalyzeCli, BadOptions) {
  const std::string p = temp_db("opts");
  write_scenario("healthy", true, p);
  expect_one_line_error(gpuscope("analyze " + p + " --steps 30-40"), "no steps numbered 30-40");
  expect_one_line_error(gpuscope("analyze " + p + " --steps x"), "--steps");
  expect_one_line_error(gpuscope("analyze " + p + " --device 3"), "device 3 has no GPU activity");
  expect_one_line_error(gpuscope("analyze " + p + " --pid 1"), "no process 1");
  EXPECT_EQ(gpuscope("analyze " + p + " --format pdf").code, 2);
}

TEST(AnalyzeCli, RankOption) {
  const std::string p = temp_db("ranks");
  write_scenario("straggler", true, p);
  Result r = gpuscope("analyze " + p + " --rank 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("process 5002 (rank 2 of 4)"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\nRanks ("), std::string::npos);
  EXPECT_NE(r.out.find("straggler"), std::string::npos);
  expect_one_line_error(gpuscope("analyze " + p + " --rank 9"), "no process with rank 9 (ranks: 0, 1, 2, 3)");
  EXPECT_EQ(gpuscope("analyze " + p + " --rank 1 --pid 5001").code, 2) << "--rank and --pid exclude each other";
  const std::string one = temp_db("norank");
  write_scenario("healthy", true, one);
  expect_one_line_error(gpuscope("analyze " + one + " --rank 0"), "no process has a rank");
}

TEST(AnalyzeCli, OutputFileNeverOverwrittenWithoutForce) {
  const std::string p = temp_db("out");
  write_scenario("host-sync", true, p);
  const std::string out = p + ".html";
  fs::remove(out);
  Result r = gpuscope("analyze " + p + " --format html -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  ASSERT_TRUE(fs::exists(out));
  const auto size = fs::file_size(out);
  EXPECT_GT(size, 1000u);
  expect_one_line_error(gpuscope("analyze " + p + " --format json -o " + out), "already exists; use --force");
  EXPECT_EQ(fs::file_size(out), size);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --force -o " + out).code, 0);
  EXPECT_NE(fs::file_size(out), size);
  for (const auto& e : fs::directory_iterator(fs::path(out).parent_path()))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temporary file left: " << e.path();
}

// `-o ''` was stdout with exit 0 (issue 50): an empty name is refused at once.
TEST(AnalyzeCli, AnEmptyOutputNameIsRefused) {
  const std::string p = temp_db("emptyout");
  write_scenario("healthy", true, p);
  expect_one_line_error(gpuscope("analyze " + p + " -o ''"), "--output: wants a file name, not an empty one");
  expect_one_line_error(gpuscope("analyze " + p + " --output=''"), "--output: ");  // CLI11: "1 required TEXT:FILE missing"
}

// `--what-if amp+amp` listed the copy as "does not apply", fifty `--what-if amp`
// planned fifty times (issue 50): each fix once per combination, each
// combination (in any order) once, and one line on stderr says what was left out.
TEST(AnalyzeCli, WhatIfRepeatsArePlannedOnce) {
  const std::string p = temp_db("whatif_repeats");
  write_scenario("host-sync", true, p);
  std::string args = "analyze " + p + " --format json --what-if amp+amp --what-if host-sync+amp";
  for (int i = 0; i < 50; ++i) args += " --what-if amp";
  args += " --what-if amp+host-sync";
  Result r = gpuscope(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("gpuscope: note: --what-if: each fix and each combination is planned once ('amp+amp' names "
                       "amp twice; 'amp' given 51 times; 'host-sync+amp' given 2 times)"),
            std::string::npos)
      << r.err;
  const auto asked = nlohmann::json::parse(r.out)["whatif"]["asked"];
  ASSERT_EQ(asked.size(), 2u) << asked.dump();
  EXPECT_EQ(asked[0]["asked"], nlohmann::json::array({"amp"})) << asked.dump();
  EXPECT_EQ(asked[1]["asked"], nlohmann::json::array({"host-sync", "amp"})) << asked.dump();
  for (const auto& a : asked) EXPECT_EQ(a["skipped"].size() + a["fixes"].size(), a["asked"].size()) << a.dump();
}

TEST(AnalyzeCli, FailOnSavingGatesCi) {
  const std::string p = temp_db("gate");
  write_scenario("host-sync", true, p);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --fail-on-saving 5").code, 1);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --fail-on-saving 90").code, 0);
}

TEST(AnalyzeCli, ListRules) {
  Result r = gpuscope("analyze --list-rules");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("### `dataloader-stall`"), std::string::npos);
  EXPECT_NE(r.out.find("kAmpSpeedup"), std::string::npos);
  EXPECT_NE(r.out.find("### `straggler`"), std::string::npos) << "cross-rank rules are listed too";
}

}  // namespace
}  // namespace gpuscope::testing
