// Every command that reads a recording also reads a torch.profiler trace
// (formats::open_recording): `analyze|info|export|check trace.json.gz` give
// what `import` followed by the same command on the .db gives, a bad file is
// one line naming it, and the temporary recording never outlives the command.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

const char* const kTraces[] = {"mlp_h200_torch_profiler.json.gz", "torch113_cpu_mlp.json.gz"};

// The same command with TMPDIR pointed at `tmpdir`.
Result in_tmpdir(const std::string& tmpdir, const std::string& args) {
  return run("TMPDIR='" + tmpdir + "' " + bin() + " " + args);
}

// Drops every "recording" key (the file name the report was made from).
void drop_recording_names(nlohmann::json& j) {
  if (j.is_object()) {
    j.erase("recording");
    for (auto& [k, v] : j.items()) drop_recording_names(v);
  } else if (j.is_array()) {
    for (auto& v : j) drop_recording_names(v);
  }
}

nlohmann::json report(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  drop_recording_names(j);
  return j;
}

// Everything but the lines naming the file and the gpuscope that wrote it
// (`import` records its version; a trace opened directly was written by none).
std::string comparable_info(const std::string& info) {
  std::string out;
  size_t start = 0;
  while (start < info.size()) {
    size_t end = info.find('\n', start);
    if (end == std::string::npos) end = info.size() - 1;
    const std::string line = info.substr(start, end - start + 1);
    if (!line.starts_with("file ") && !line.starts_with("gpuscope ")) out += line;
    start = end + 1;
  }
  return out;
}

class Traces : public ::testing::TestWithParam<const char*> {};

TEST_P(Traces, EveryCommandReadsTheTraceAsItsImport) {
  TempDir tmp;
  const std::string trace = data(GetParam()), db = tmp.file("imported.db"), tmpdir = tmp.file("tmpdir");
  fs::create_directories(tmpdir);
  const Result imp = gpuscope("import -q " + trace + " -o " + db);
  ASSERT_EQ(imp.exit_code, 0) << imp.output;

  // analyze: the same JSON report but for the file name.
  const Result direct = in_tmpdir(tmpdir, "analyze " + trace + " --format json -o " + tmp.file("direct.json"));
  ASSERT_EQ(direct.exit_code, 0) << direct.output;
  const Result via_db = gpuscope("analyze " + db + " --format json -o " + tmp.file("via_db.json"));
  ASSERT_EQ(via_db.exit_code, 0) << via_db.output;
  const nlohmann::json a = nlohmann::json::parse(read_file(tmp.file("direct.json")));
  EXPECT_EQ(a["recording"], GetParam()) << "the report names the trace, not the temporary copy";
  EXPECT_EQ(report(read_file(tmp.file("direct.json"))), report(read_file(tmp.file("via_db.json"))));
  // The text report too, once the file name is taken out.
  Result text = in_tmpdir(tmpdir, "analyze " + trace), text_db = gpuscope("analyze " + db);
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_FALSE(text.has(tmpdir)) << text.output;
  for (auto* r : {&text, &text_db}) {
    const std::string name = r == &text ? std::string(GetParam()) : std::string("imported.db");
    for (size_t p = r->output.find(name); p != std::string::npos; p = r->output.find(name)) r->output.replace(p, name.size(), "NAME");
  }
  EXPECT_EQ(text.output, text_db.output);

  // info: the same summary; the file line names what was given.
  const Result info = in_tmpdir(tmpdir, "info " + trace), info_db = gpuscope("info " + db);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_TRUE(info.has("file            " + trace)) << info.output;
  EXPECT_TRUE(info.has("torch.profiler import")) << info.output;
  EXPECT_EQ(comparable_info(info.output), comparable_info(info_db.output));

  // export: the same Chrome trace (which names its own file, hence one name in two
  // folders) and Perfetto protobuf.
  for (const char* dir : {"direct", "via_db"}) fs::create_directories(tmp.file(dir));
  const Result ex = in_tmpdir(tmpdir, "export -q " + trace + " --chrome " + tmp.file("direct/t.json.gz") +
                                          " --perfetto " + tmp.file("direct/t.pftrace"));
  ASSERT_EQ(ex.exit_code, 0) << ex.output;
  const Result ex_db = gpuscope("export -q " + db + " --chrome " + tmp.file("via_db/t.json.gz") + " --perfetto " +
                                tmp.file("via_db/t.pftrace"));
  ASSERT_EQ(ex_db.exit_code, 0) << ex_db.output;
  EXPECT_TRUE(read_file(tmp.file("direct/t.pftrace")) == read_file(tmp.file("via_db/t.pftrace")));
  const std::string chrome = run("zcat " + tmp.file("direct/t.json.gz")).output;
  EXPECT_GT(chrome.size(), 1000u);
  EXPECT_TRUE(chrome == run("zcat " + tmp.file("via_db/t.json.gz")).output);

  // check: the same verdict and JSON report.
  write_file(tmp.file("budget.json"), R"({"max_step_ms_median": 100000})");
  const Result chk = in_tmpdir(tmpdir, "check -q " + trace + " --budget " + tmp.file("budget.json") + " --json -");
  const Result chk_db = gpuscope("check -q " + db + " --budget " + tmp.file("budget.json") + " --json -");
  ASSERT_EQ(chk.exit_code, 0) << chk.output;
  ASSERT_EQ(chk_db.exit_code, 0) << chk_db.output;
  EXPECT_EQ(report(chk.output), report(chk_db.output));
  EXPECT_EQ(nlohmann::json::parse(chk.output)["recording"], GetParam());

  EXPECT_TRUE(listing(tmpdir).empty()) << "left behind: " << listing(tmpdir).front();
}

INSTANTIATE_TEST_SUITE_P(Data, Traces, ::testing::ValuesIn(kTraces));

TEST(Traces, ABadFileIsOneLineNamingItAndLeavesNothing) {
  TempDir tmp;
  const std::string tmpdir = tmp.file("tmpdir");
  fs::create_directories(tmpdir);
  const std::string gz = read_file(data("torch113_cpu_mlp.json.gz"));
  write_file(tmp.file("cut.json.gz"), gz.substr(0, gz.size() / 2));
  write_file(tmp.file("notes.txt"), "hello, not a recording\n");
  write_file(tmp.file("shape.json"), R"({"name": "a config file", "values": [1, 2, 3]})");
  write_file(tmp.file("budget.json"), R"({"max_step_ms_median": 100000})");
  struct Case {
    std::string file, problem;
  };
  const std::vector<Case> cases = {{"cut.json.gz", "truncated gzip"},
                                   {"notes.txt", "not a gpuscope recording"},
                                   {"shape.json", "not a torch.profiler trace"}};
  for (const auto& c : cases) {
    const std::string f = tmp.file(c.file);
    for (const std::string& args : {"analyze " + f, "info " + f, "export -q " + f + " --chrome " + tmp.file("o.json"),
                                    "check " + f + " --budget " + tmp.file("budget.json"),
                                    "diff " + data("torch113_cpu_mlp.json.gz") + " " + f}) {
      SCOPED_TRACE(args);
      const Result r = in_tmpdir(tmpdir, args);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_EQ(r.lines(), 1) << r.output;
      EXPECT_TRUE(r.has("gpuscope: error: " + f + ": ")) << r.output;
      EXPECT_TRUE(r.has(c.problem)) << r.output;
      EXPECT_FALSE(r.has(tmpdir)) << r.output;
      EXPECT_FALSE(fs::exists(tmp.file("o.json")));
      EXPECT_TRUE(listing(tmpdir).empty()) << "left behind: " << listing(tmpdir).front();
    }
  }
}

}  // namespace
}  // namespace gpuscope::cli::test
