// `gpuscope view` without a display (issue 23): one line saying what to do
// and exit 1, where Qt would abort with SIGABRT.
#include <gtest/gtest.h>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

TEST(View, NoDisplaySaysWhatToDo) {
  if (!fs::exists(std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope-view")) GTEST_SKIP() << "no viewer in this build";
  const Result r = run("env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM " + bin() + " view " +
                       data("known_work_h200.db"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("--screenshot out.png")) << r.output;
  EXPECT_TRUE(r.has("QT_QPA_PLATFORM=offscreen")) << r.output;
  EXPECT_TRUE(r.has("ssh -X")) << r.output;
}

}  // namespace
}  // namespace gpuscope::cli::test
