// How the job ended (store/job_end.cpp): the meta values from wait statuses,
// written into a recording with its steps counted, read back and described.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "trace_formats/store/job_end.h"
#include "trace_formats/store/reader.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

TEST(JobEnd, ExitTextFromWaitStatus) {
  EXPECT_EQ(store::job_exit_text(0), "exit 0");
  EXPECT_EQ(store::job_exit_text(1 << 8), "exit 1");
  EXPECT_EQ(store::job_exit_text(SIGINT), "signal SIGINT");
  EXPECT_EQ(store::job_exit_text(SIGKILL), "signal SIGKILL");
}

TEST(JobEnd, WrittenAndReadBack) {
  const std::string path = testing::fresh_temp_db("job_end");
  {
    test_support::RecordingBuilder b(path);
    b.process(test_support::python_process(10));
    b.at(10, 10);
    for (int i = 0; i < 3; ++i) b.step(i, i * 100, i * 100 + 100);
    b.process(test_support::python_process(20));
    b.at(20, 20);
    b.step(0, 0, 100);
  }
  {
    store::Reader r(path);
    EXPECT_FALSE(store::read_job_end(r));  // not recorded by `record`
  }
  store::write_job_end(path, "exit 1", 1'234'000'000);
  store::Reader r(path);
  const auto job = store::read_job_end(r);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->exit_code, 1);
  EXPECT_TRUE(job->failed());
  EXPECT_EQ(job->steps, 3);  // the most of any process
  EXPECT_EQ(job->describe(), "exit code 1 after 1.234 s, 3 steps completed");
}

TEST(JobEnd, SignalAndCleanExit) {
  store::JobEnd j;
  j.signal = "SIGINT";
  j.wall_ns = 5'000'000'000;
  j.steps = 1;
  EXPECT_FALSE(j.failed());  // Ctrl-C: stopped, not failed
  EXPECT_TRUE(j.stopped());
  EXPECT_TRUE(j.unclean());
  EXPECT_EQ(j.describe(), "killed by SIGINT after 5.000 s, 1 step completed");
  j.signal = "SIGKILL";
  EXPECT_TRUE(j.failed());
  j.signal.clear();
  j.exit_code = 0;
  EXPECT_FALSE(j.failed());
  EXPECT_FALSE(j.unclean());
}

}  // namespace
}  // namespace gpuscope
