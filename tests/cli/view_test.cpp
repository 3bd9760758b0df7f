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

// DISPLAY naming no X server (issue 39): one line and exit 1, not SIGABRT;
// --help and --version print and exit 0 with no display or an unreachable one;
// a screenshot falls back to offscreen rendering.
TEST(View, AnUnreachableDisplaySaysWhatToDo) {
  if (!fs::exists(std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope-view")) GTEST_SKIP() << "no viewer in this build";
  const std::string env = "env -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM DISPLAY=:99 ";
  const Result r = run(env + bin() + " view " + data("known_work_h200.db"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.signal, 0) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("cannot connect to the X server of DISPLAY=:99")) << r.output;
  EXPECT_TRUE(r.has("QT_QPA_PLATFORM=offscreen")) << r.output;

  TempDir tmp;
  const Result shot = run(env + bin() + " view " + data("known_work_h200.db") + " --screenshot " + tmp.file("s.png"));
  EXPECT_EQ(shot.exit_code, 0) << shot.output;
  EXPECT_TRUE(fs::exists(tmp.file("s.png")));
}

TEST(View, HelpAndVersionNeedNoDisplay) {
  const std::string viewer = std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope-view";
  if (!fs::exists(viewer)) GTEST_SKIP() << "no viewer in this build";
  for (const std::string env : {"env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM ",
                                "env -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM DISPLAY=:99 "}) {
    SCOPED_TRACE(env);
    const Result help = run(env + viewer + " --help");
    EXPECT_EQ(help.exit_code, 0) << help.output;
    EXPECT_TRUE(help.has("--screenshot")) << help.output;
    const Result version = run(env + viewer + " --version");
    EXPECT_EQ(version.exit_code, 0) << version.output;
    EXPECT_TRUE(version.has(GPUSCOPE_VERSION_TEXT)) << version.output;
  }
}

}  // namespace
}  // namespace gpuscope::cli::test
