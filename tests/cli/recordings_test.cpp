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

// analyze, export and info on a recording `record` is still writing say so in
// one line; --wait waits for the job's end and then reads the whole file.
TEST(Recordings, ALiveRecordingIsSaidAndWaitedFor) {
  TempDir tmp;
  const std::string db = tmp.file("live.db");
  const auto start = std::chrono::steady_clock::now();
  std::thread job([&] { run(bin() + " record -o " + db + " -- sleep 4"); });
  while (!fs::exists(db) && std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string said = db + " is still being recorded (gpuscope record, pid ";
  for (const std::string& command : {"info " + db, "analyze " + db, "export " + db + " --chrome " + tmp.file("t.json")}) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_TRUE(r.has("gpuscope: note: " + said)) << r.output;
    EXPECT_TRUE(r.has("--wait waits until the job ends")) << r.output;
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
}

}  // namespace
}  // namespace gpuscope::cli::test
