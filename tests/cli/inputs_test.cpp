// What the commands take and say (issue 39, item 8): file names with control
// bytes escaped in every command's messages, `--` before a name starting with
// a dash, numbers that are not numbers refused, duplicate budget keys refused,
// a file that is not a recording named for what it is, a failed write naming
// the output (not its hidden temporary file) and leaving no folder behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

const std::string kHostile = "a\x1b]0;owned\x07\nb";

bool has_control_bytes(const std::string& s) {
  for (char c : s)
    if (c == '\x1b' || c == '\x07') return true;
  return false;
}

TEST(Inputs, FileNamesAreEscapedInEveryCommand) {
  TempDir tmp;
  const std::string db = tmp.file(kHostile + ".db"), trace = tmp.file(kHostile + ".json");
  fs::copy_file(data("nvtx_loop.db"), db);
  fs::copy_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json", trace);
  ScopedEnv in("GS_DB", db), tr("GS_TRACE", trace), out("GS_OUT", tmp.file(kHostile + ".out.json")),
      imp("GS_IMPORTED", tmp.file(kHostile + ".imported.db")), rec("GS_REC", tmp.file(kHostile + ".rec.db"));
  for (const std::string& command : {std::string("info \"$GS_DB\""), std::string("export \"$GS_DB\" --chrome \"$GS_OUT\""),
                                     std::string("import \"$GS_TRACE\" -o \"$GS_IMPORTED\""),
                                     std::string("record -o \"$GS_REC\" -- true")}) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(r.has("a\\x1b]0;owned\\x07\\x0ab")) << r.output;
    EXPECT_FALSE(has_control_bytes(r.output)) << r.output;
  }
}

TEST(Inputs, DoubleDashEndsTheOptions) {
  TempDir tmp;
  fs::copy_file(data("nvtx_loop.db"), tmp.file("-dash.db"));
  const Result r = run("cd " + tmp.path() + " && " + bin() + " info -- -dash.db");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.has("file            -dash.db")) << r.output;
}

TEST(Inputs, NumbersThatAreNotAllowedAreRefused) {
  TempDir tmp;
  const std::string db = data("nvtx_loop.db");
  for (const auto& [command, said] : std::vector<std::pair<std::string, std::string>>{
           {"analyze " + db + " --fail-on-saving -1", "--fail-on-saving: wants a number from 0 to 100, not '-1'"},
           {"analyze " + db + " --fail-on-saving nan", "--fail-on-saving: wants a number from 0 to 100, not 'nan'"},
           {"record --duration nan -- true", "--duration: wants a number from 0 to 1e+09, not 'nan'"},
           {"record --delay -1 -- true", "--delay: wants a number from 0 to 1e+09, not '-1'"},
           {"record -o '' -- true", "--output: wants a file name, not an empty one"}}) {
    SCOPED_TRACE(command);
    const Result r = run("cd " + tmp.path() + " && " + bin() + " " + command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.lines(), 1) << r.output;
    EXPECT_TRUE(r.has(said)) << r.output;
  }
  EXPECT_TRUE(listing(tmp.path()).empty());  // no gpuscope_1.db
}

TEST(Inputs, ABudgetKeyGivenTwiceIsRefused) {
  TempDir tmp;
  const std::string budget = tmp.file("budget.json");
  write_file(budget, R"({"max_step_ms_median": 1000, "comment": "x", "max_step_ms_median": 1})");
  const Result r = gpuscope("check " + data("nvtx_loop.db") + " --budget " + budget);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has(budget + ": key \"max_step_ms_median\" appears twice")) << r.output;
}

TEST(Inputs, AFileThatIsNoRecordingIsNamedForWhatItIs) {
  TempDir tmp;
  const std::string json = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json";
  write_file(tmp.file("plain.json.gz"), "{\"traceEvents\": []}");
  write_file(tmp.file("garbage.json"), "garbage, not JSON");
  write_file(tmp.file("bom.json"), "\xef\xbb\xbf" + read_file(json));
  ASSERT_EQ(run("zstd -q " + json + " -o " + tmp.file("zstd.json")).exit_code, 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"plain.json.gz", "named .gz but not gzip-compressed"},
      {"garbage.json", "not a torch.profiler trace"},
      {"bom.json", "starts with a UTF-8 byte-order mark"},
      {"zstd.json", "compressed with zstd; decompress it first"}};
  for (const auto& [name, said] : cases)
    for (const std::string& command : {std::string("info "), std::string("analyze "), "import -o " + tmp.file("out.db") + " "}) {
      if (name == "garbage.json" && command.starts_with("import")) continue;  // the JSON reader's own error
      SCOPED_TRACE(command + name);
      const Result r = gpuscope(command + tmp.file(name));
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_EQ(r.lines(), 1) << r.output;
      EXPECT_TRUE(r.has(tmp.file(name) + ": " + said)) << r.output;
      EXPECT_FALSE(r.has("not an SQLite database")) << r.output;
    }
}

TEST(Inputs, AnUnreadableRecordingSaysPermissionDenied) {
  TempDir tmp;
  const std::string db = tmp.file("private.db");
  fs::copy_file(data("nvtx_loop.db"), db);
  fs::permissions(db, fs::perms::owner_write);
  std::string as_other;
  if (::geteuid() == 0) {
    if (run("command -v setpriv").exit_code != 0) GTEST_SKIP() << "root, and no setpriv to drop it";
    as_other = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    fs::permissions(tmp.path(), fs::perms::all);
    fs::permissions(fs::path(tmp.path()).parent_path(), fs::perms::others_exec, fs::perm_options::add);
  }
  const Result r = run(as_other + bin() + " info " + db);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has(db + ": cannot read: Permission denied")) << r.output;
}

// Past SQLite's 512-byte full paths: a recording is read; an output is
// refused in one line saying why.
TEST(Inputs, AVeryLongPathOpens) {
  TempDir tmp;
  std::string dir = tmp.path();
  while (dir.size() < 600) dir += "/" + std::string(100, 'd');
  fs::create_directories(dir);
  fs::copy_file(data("nvtx_loop.db"), dir + "/run.db");
  const Result info = gpuscope("info " + dir + "/run.db");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(info.has("file            " + dir + "/run.db")) << info.output;
  const Result analyze = gpuscope("analyze --format json " + dir + "/run.db");
  EXPECT_EQ(analyze.exit_code, 0) << analyze.output;
  const Result chrome = gpuscope("export -q " + dir + "/run.db --chrome " + dir + "/run.json");
  EXPECT_EQ(chrome.exit_code, 0) << chrome.output;
  const Result out = gpuscope("import " + std::string(GPUSCOPE_SOURCE_DIR) +
                              "/tests/trace_formats/import/kineto_small.json -o " + dir + "/imported.db");
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_EQ(out.lines(), 1) << out.output;
  EXPECT_TRUE(out.has("characters long, and SQLite writes no file whose path is longer than 511")) << out.output;
}

// A write that fails (a file size limit standing in for a full disk) names the
// output, and a failed --tensorboard export leaves no LOGDIR/RUN behind.
TEST(Inputs, AFailedWriteNamesTheOutputAndLeavesNothing) {
  TempDir tmp;
  const std::string limited = "bash -c \"trap '' XFSZ; ulimit -f 100; exec " + bin() + " ";
  const Result imp = run(limited + "import " + data("mlp_h200_torch_profiler.json.gz") + " -o " + tmp.file("out.db") + "\"");
  EXPECT_EQ(imp.exit_code, 2) << imp.output;
  EXPECT_EQ(imp.lines(), 1) << imp.output;
  EXPECT_TRUE(imp.has("gpuscope: error: " + tmp.file("out.db") + ": ")) << imp.output;
  EXPECT_FALSE(imp.has(".tmp")) << imp.output;
  const Result tb = run(limited + "export " + data("mlp_h200.db") + " --tensorboard " + tmp.file("logdir/deeper") +
                        " --run r\"");
  EXPECT_EQ(tb.exit_code, 2) << tb.output;
  EXPECT_TRUE(tb.has("File too large")) << tb.output;
  EXPECT_TRUE(listing(tmp.path()).empty()) << tb.output;
}

}  // namespace
}  // namespace gpuscope::cli::test
