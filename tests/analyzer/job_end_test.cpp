// analyzer/job_end.cpp: a job that failed before completing a step has its
// findings marked as start-up only and ranked low, whatever their saving; the
// same recording of a job that ran on keeps its severities.
#include <gtest/gtest.h>

#include "analyzer/job_end.h"
#include "trace_formats/store/job_end.h"
#include "trace_formats/store/writer.h"
#include "tests/analyzer/test_util.h"
#include "tests/support/recording_builder.h"
#include "trace_formats/common/error.h"

namespace gpuscope::testing {
namespace {

// The planted launch-bound loop (a high-severity finding) with how the job
// ended as `record` writes it, `steps` completed.
analyzer::Analysis launch_bound_that_ended(const std::string& exit_text, int64_t steps) {
  const std::string path = temp_db("job_end_" + exit_text.substr(0, 4) + std::to_string(steps));
  write_scenario("launch-bound", true, path);
  store::write_job_end(path, exit_text, 2'000'000'000);
  store::Writer w(path);
  w.begin();
  w.set_meta("job_steps", std::to_string(steps));
  w.commit();
  return analyze_path(path);
}

bool any_above_low(const analyzer::Analysis& a) {
  for (const auto& f : a.findings)
    if (f.severity != analyzer::Severity::kLow) return true;
  return false;
}

TEST(JobEnd, FindingsOfAJobThatFailedBeforeItsFirstStepAreLowAndMarkedStartUp) {
  const analyzer::Analysis a = launch_bound_that_ended("exit 1", 0);
  ASSERT_FALSE(a.findings.empty());
  EXPECT_TRUE(analyzer::startup_only(a.summary));
  EXPECT_FALSE(any_above_low(a)) << finding_list(a);
  EXPECT_NE(analyzer::job_end_line(a.summary).find("start-up only"), std::string::npos);
  EXPECT_NE(analyzer::to_text(a).find("the findings describe its start-up only"), std::string::npos);
}

TEST(JobEnd, TheSameFindingsKeepTheirSeverityWhenTheJobCompletedSteps) {
  // Must-not-fire: the cap is about start-up, not about any failed job.
  const analyzer::Analysis failed_later = launch_bound_that_ended("exit 1", 20);
  EXPECT_FALSE(analyzer::startup_only(failed_later.summary));
  EXPECT_TRUE(any_above_low(failed_later)) << finding_list(failed_later);
  const analyzer::Analysis clean = launch_bound_that_ended("exit 0", 0);
  EXPECT_TRUE(any_above_low(clean)) << finding_list(clean);
}

// Issue 50: a job that died before its first timed event left nothing to
// analyse, and analyze said only that ("process N has no timed events to
// analyse"), not that the job failed, as info does.
std::string analyse_error(const std::string& path) {
  try {
    analyze_path(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << path << ": analysed, though it holds no timed event";
  return {};
}

TEST(JobEnd, NothingToAnalyseOfAFailedJobSaysItFailed) {
  const std::string empty = temp_db("job_end_empty");
  {
    test_support::RecordingBuilder b(empty);
    b.process(test_support::python_process(10));
  }
  // A step table and a process, but nothing timed in the process analysed.
  const std::string untimed = temp_db("job_end_untimed");
  {
    test_support::RecordingBuilder b(untimed);
    b.process(test_support::python_process(10));
    b.process(test_support::python_process(20));
    b.at(20, 20);
    b.step(0, 100, 50);  // ends before it starts: not a timed event
  }
  for (const std::string& path : {empty, untimed}) {
    SCOPED_TRACE(path);
    store::write_job_end(path, "exit 1", 312'000'000);
    EXPECT_NE(analyse_error(path).find(": job FAILED: exit code 1 after 0.312 s, "), std::string::npos)
        << analyse_error(path);
    // Must-not-fire: a job that exited cleanly is not said to have failed.
    store::write_job_end(path, "exit 0", 312'000'000);
    EXPECT_EQ(analyse_error(path).find("FAILED"), std::string::npos) << analyse_error(path);
  }
}

}  // namespace
}  // namespace gpuscope::testing
