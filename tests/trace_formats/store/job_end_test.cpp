// How the job ended (store/job_end.cpp): the meta values from wait statuses,
// written into a recording with its steps counted, read back and described.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "trace_formats/store/job_end.h"
#include "trace_formats/schema/meta_keys.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
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

// A recording of `record`'s (meta source) with 3 steps of 1 s, its last commit
// made by a writer killed before it closed: the file in WAL mode, no job_exit,
// -wal and -shm beside it, as `gpuscope record` killed with SIGKILL leaves it.
std::string recording_of_a_killed_record(const std::string& name) {
  const std::string path = testing::fresh_temp_db(name);
  {
    test_support::RecordingBuilder b(path);
    b.meta(meta_key::kSource, "gpuscope record");
    b.process(test_support::python_process(10));
    b.at(10, 10);
    for (int i = 0; i < 3; ++i) b.step(i, i * 1'000'000'000ll, (i + 1) * 1'000'000'000ll + 500'000'000);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    store::Writer w(path);
    w.begin();
    w.set_meta(meta_key::kTrace, "cuda,nvtx,torch");
    w.commit();
    ::raise(SIGKILL);  // no close, no checkpoint
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return path;
}

TEST(JobEnd, RecordKilledWithItsJobIsSaidWhereJobExitIsMissing) {
  // Issue 50: SIGKILL to `gpuscope record` (the job dies with it) left no job
  // line in info or analyze. record writes job_exit once it has reaped the job
  // and finalizes the file (rollback mode) after: its file in WAL mode without
  // job_exit, written by nobody now, lost record first.
  const std::string path = recording_of_a_killed_record("job_end_record_killed");
  ASSERT_TRUE(std::filesystem::exists(path + "-wal"));
  store::Reader r(path);
  const auto job = store::read_job_end(r);
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->recorder_killed);
  EXPECT_EQ(job->signal, "SIGKILL");
  EXPECT_TRUE(job->failed());
  EXPECT_EQ(job->steps, 3);
  EXPECT_EQ(job->describe(), "killed with gpuscope record (SIGKILL); recording cut at 3.500 s, 3 steps completed");
  // The reader checkpointed what the killed writer left and removed its files.
  EXPECT_EQ(r.meta(meta_key::kTrace), "cuda,nvtx,torch");
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

TEST(JobEnd, NoKilledRecordWhileLiveOrWithoutRecord) {
  // Must-not-fire: a file `record` still holds (its flock: live) is being
  // written, and one that record did not make (LD_PRELOAD) never has job_exit.
  const std::string path = recording_of_a_killed_record("job_end_record_live");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  {
    store::Reader r(path);
    EXPECT_FALSE(store::read_job_end(r));
  }
  ::close(fd);
  {
    store::Writer w(path);
    w.begin();
    w.set_meta(meta_key::kSource, "gpuscope capture");
    w.commit();
  }
  store::Reader r(path);
  EXPECT_FALSE(store::read_job_end(r));
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
