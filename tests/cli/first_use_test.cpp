// What a first-time user meets (issue 23): misspelt commands and options,
// help and version, bad numbers, a damaged file, a folder that cannot be
// written, and terminal escapes in input data.
#include <gtest/gtest.h>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

void expect_one_line(const Result& r, int code, const std::string& text) {
  EXPECT_EQ(r.exit_code, code) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has(text)) << "wanted: " << text << "\ngot: " << r.output;
}

TEST(FirstUse, AnalyseIsAnalyze) {
  const Result r = gpuscope("analyse " + data("nvtx_loop.db"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.has("steps")) << r.output;
}

TEST(FirstUse, UnknownCommandsSayWhatWasMeant) {
  expect_one_line(gpuscope("anlyze x.db"), 2, "gpuscope: unknown command \"anlyze\"; did you mean \"analyze\"?");
  expect_one_line(gpuscope("exprot x.db"), 2, "did you mean \"export\"?");
  expect_one_line(gpuscope("recrod -- true"), 2, "did you mean \"record\"?");
  expect_one_line(gpuscope("frobnicate"), 2, "gpuscope: unknown command \"frobnicate\"");
}

TEST(FirstUse, HelpAndVersion) {
  for (const char* args : {"help", "--help", "-h"}) {
    const Result r = gpuscope(args);
    EXPECT_EQ(r.exit_code, 0) << args << r.output;
    EXPECT_TRUE(r.has("analyze")) << args << r.output;
    EXPECT_TRUE(r.has("record")) << args << r.output;
  }
  const Result sub = gpuscope("help diff");
  EXPECT_EQ(sub.exit_code, 0) << sub.output;
  EXPECT_TRUE(sub.has("--threshold")) << sub.output;
  for (const char* args : {"version", "-V", "--version"}) {
    const Result r = gpuscope(args);
    EXPECT_EQ(r.exit_code, 0) << args << r.output;
    EXPECT_EQ(r.output, std::string(GPUSCOPE_VERSION_TEXT) + "\n") << args;
  }
}

TEST(FirstUse, BadOptionsAreNamed) {
  expect_one_line(gpuscope("--badopt"), 2, "--badopt");
  expect_one_line(gpuscope("analyze " + data("nvtx_loop.db") + " --badopt"), 2, "--badopt");
  expect_one_line(gpuscope("analyze " + data("nvtx_loop.db") + " --top abc"), 2, "--top: wants a whole number");
  expect_one_line(gpuscope("diff a.db b.db --top 2.5"), 2, "--top: wants a whole number");
  expect_one_line(gpuscope("analyze " + data("nvtx_loop.db") + " --pid x"), 2, "--pid: wants a whole number");
}

// A recording whose second half is overwritten: SQLite opens it and reads
// the schema, then finds a malformed page during the analysis.
std::string damaged_copy(const TempDir& tmp, const std::string& name) {
  std::string bytes = read_file(data("nvtx_loop.db"));
  for (size_t at = bytes.size() / 2; at < bytes.size(); ++at) bytes[at] = static_cast<char>(0x5a ^ (at * 131));
  write_file(tmp.file(name), bytes);
  return tmp.file(name);
}

TEST(FirstUse, ADamagedRecordingIsNamed) {
  TempDir tmp;
  const std::string good = tmp.file("good.db"), bad = damaged_copy(tmp, "damaged.db");
  fs::copy_file(data("nvtx_loop.db"), good);
  for (const std::string& args : {"analyze " + bad, "info " + bad, "diff " + good + " " + bad, "diff " + bad + " " + good}) {
    SCOPED_TRACE(args);
    const Result r = gpuscope(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    const size_t at = r.output.find("gpuscope: error: ");
    ASSERT_NE(at, std::string::npos) << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    EXPECT_NE(line.find("damaged.db: "), std::string::npos) << line;
    EXPECT_EQ(line.find("good.db"), std::string::npos) << line;
  }
}

TEST(FirstUse, WriteErrorsSayWhy) {
  TempDir tmp;
  const Result r = gpuscope("analyze " + data("nvtx_loop.db") + " -o " + tmp.file("no/such/folder/r.txt"));
  expect_one_line(r, 2, "r.txt");
  EXPECT_TRUE(r.has("No such file or directory")) << r.output;
  const Result e = gpuscope("export -q " + data("nvtx_loop.db") + " --chrome " + tmp.file("missing/t.json"));
  expect_one_line(e, 2, "t.json");
  EXPECT_TRUE(e.has("No such file or directory")) << e.output;
}

TEST(FirstUse, TerminalEscapesInInputAreShownNotSent) {
  TempDir tmp;
  // An unknown category carrying "ESC ] 0 ; pwned BEL" (set the window title).
  std::string trace = read_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json");
  const std::string from = "\"a_future_category\"";
  ASSERT_NE(trace.find(from), std::string::npos);
  trace.replace(trace.find(from), from.size(), "\"evil\\u001b]0;pwned\\u0007\"");
  write_file(tmp.file("t.json"), trace);
  const Result imp = gpuscope("import -q " + tmp.file("t.json") + " -o " + tmp.file("t.db"));
  EXPECT_EQ(imp.exit_code, 0) << imp.output;
  EXPECT_EQ(imp.output.find('\x1b'), std::string::npos) << imp.output;
  EXPECT_EQ(imp.output.find('\x07'), std::string::npos) << imp.output;
  EXPECT_TRUE(imp.has("evil\\x1b]0;pwned\\x07 1")) << imp.output;

  write_file(tmp.file("budget.json"), R"({"max_step_ms\u001b]0;pwned\u0007": 1})");
  const Result chk = gpuscope("check " + data("nvtx_loop.db") + " --budget " + tmp.file("budget.json"));
  EXPECT_EQ(chk.exit_code, 2) << chk.output;
  EXPECT_EQ(chk.output.find('\x1b'), std::string::npos) << chk.output;
  EXPECT_EQ(chk.output.find('\x07'), std::string::npos) << chk.output;
  EXPECT_TRUE(chk.has("max_step_ms\\x1b]0;pwned\\x07")) << chk.output;
}

}  // namespace
}  // namespace gpuscope::cli::test
