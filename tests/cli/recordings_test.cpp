// Reading recordings that are not whole (issue 39): a recording with a table
// dropped is refused by every command in one line naming it, without SQL
// text; a recording still being written is said to be live.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

TEST(Recordings, ADamagedRecordingIsRefusedByEveryCommandInOneLine) {
  TempDir tmp;
  const std::string bad = tmp.file("bad.db"), good = tmp.file("good.db"), budget = tmp.file("budget.json");
  fs::copy_file(data("nvtx_loop.db"), bad);
  fs::copy_file(data("nvtx_loop.db"), good);
  ASSERT_EQ(run("sqlite3 " + bad + " 'DROP TABLE kernel'").exit_code, 0);
  write_file(budget, R"({"max_step_ms_median": 1000})");
  for (const std::string& command :
       {"analyze " + bad, "analyze --format json " + bad + " -o " + tmp.file("r.json"), "info " + bad,
        "export " + bad + " --chrome " + tmp.file("t.json"), "export " + bad + " --perfetto " + tmp.file("t.pftrace"),
        "export " + bad + " --tensorboard " + tmp.file("tb"), "check " + bad + " --budget " + budget,
        "diff " + good + " " + bad, "diff " + bad + " " + good, "cluster --summarize " + bad}) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.lines(), 1) << r.output;
    EXPECT_TRUE(r.has("gpuscope: error: " + bad + ": damaged recording: table kernel missing")) << r.output;
    EXPECT_FALSE(r.has("SELECT")) << r.output;
  }
  EXPECT_EQ(listing(tmp.path()), (std::vector<std::string>{"bad.db", "budget.json", "good.db"}));
}

// analyze, export, info, check and diff on a recording `record` is still
// writing say so in one line (check and diff since issue 50); --wait waits for
// the job's end and then reads the whole file.
TEST(Recordings, ALiveRecordingIsSaidAndWaitedFor) {
  TempDir tmp;
  const std::string db = tmp.file("live.db"), budget = tmp.file("budget.json");
  write_file(budget, R"({"max_step_ms_median": 1000})");
  const auto start = std::chrono::steady_clock::now();
  std::thread job([&] { run(bin() + " record -o " + db + " -- sleep 4"); });
  while (!fs::exists(db) && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string said = db + " is still being recorded (gpuscope record, pid ";
  for (const std::string& command : {"info " + db, "analyze " + db, "export " + db + " --chrome " + tmp.file("t.json"),
                                     "check " + db + " --budget " + budget, "diff " + db + " " + db}) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_TRUE(r.has("gpuscope: note: " + said)) << r.output;
    EXPECT_TRUE(r.has("--wait waits until the job ends")) << r.output;
    size_t notes = 0;
    for (size_t at = r.output.find(said); at != std::string::npos; at = r.output.find(said, at + 1)) ++notes;
    EXPECT_EQ(notes, 1u) << r.output;
  }

  const Result waited = gpuscope("info --wait " + db);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  job.join();
  EXPECT_EQ(waited.exit_code, 0) << waited.output;
  EXPECT_TRUE(waited.has("gpuscope: waiting for " + db + " to be finished (gpuscope record, pid ")) << waited.output;
  EXPECT_TRUE(waited.has("exit code 0 after")) << waited.output;  // the job's end, written after it ended
  EXPECT_GE(seconds, 4.0);
  const Result after = gpuscope("info " + db);
  EXPECT_FALSE(after.has("still being recorded")) << after.output;
  // check and diff take --wait too (issue 50): each waits for its job's end.
  for (const std::string& command : {"check --wait %s --budget " + budget, "diff --wait " + db + " %s"}) {
    SCOPED_TRACE(command);
    const std::string next = tmp.file("next.db");
    fs::remove(next);
    const auto begun = std::chrono::steady_clock::now();
    std::thread second([&] { run(bin() + " record -o " + next + " -- sleep 2"); });
    while (!fs::exists(next) && std::chrono::steady_clock::now() - begun < std::chrono::seconds(10))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::string line = command.substr(0, command.find("%s")) + next + command.substr(command.find("%s") + 2);
    const Result r = gpuscope(line);
    const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    second.join();
    EXPECT_TRUE(r.has("gpuscope: waiting for " + next + " to be finished (gpuscope record, pid ")) << r.output;
    EXPECT_FALSE(r.has("still being recorded")) << r.output;
    EXPECT_GE(waited_s, 2.0);
  }
}

}  // namespace
}  // namespace gpuscope::cli::test
