// `gpuscope diff` and `gpuscope check` as CI runs them: exit 0 for two runs of
// the same configuration, 1 for a variant with one kernel made slower (named
// first), 2 with a one-line reason for bad input and no report file left.
#include <gtest/gtest.h>


#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "trace_formats/store/sqlite.h"
#include "trace_formats/store/writer.h"
#include "tests/regress/recordings.h"
#include "tests/support/gpuscope_command.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

using Result = CommandResult;

Result gpuscope(const std::string& args, const std::string& env = "") {
  return run_gpuscope(args, temp_path("stderr.txt"), env);
}

std::string run(const std::string& name, const RunSpec& spec) {
  const std::string p = temp_path(name);
  write_run(p, spec);
  return p;
}

// The slowed kernel: a mid-sized elementwise one, so that the check is about
// attribution, not about the biggest kernel winning by default.
constexpr const char* kSlowed = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>";

RunSpec slowed(uint64_t seed) {
  RunSpec s = base_spec();
  s.seed = seed;
  s.kernels[1].us *= 3.0;  // 2 x 120 us -> 2 x 360 us per step: the kernel +200 % in total
  return s;
}

TEST(DiffCli, SameConfigurationPassesSlowerKernelFailsAndIsNamedFirst) {
  RunSpec again = base_spec();
  again.seed = 7;
  const std::string a = run("a.db", base_spec()), b = run("b.db", again), c = run("c.db", slowed(8));
  Result same = gpuscope("diff " + a + " " + b);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("gpuscope diff: NO"), std::string::npos) << same.out;

  Result slow = gpuscope("diff " + a + " " + c);
  EXPECT_EQ(slow.code, 1) << slow.out << slow.err;
  EXPECT_TRUE(slow.err.empty()) << slow.err;
  EXPECT_EQ(slow.out.rfind("gpuscope diff: REGRESSION\nRegression: step time +", 0), 0u) << slow.out;
  const size_t first = slow.out.find("behind it: kernel ");
  ASSERT_NE(first, std::string::npos) << slow.out;
  EXPECT_EQ(slow.out.find(kSlowed), first + 18) << slow.out;
  // In the top-changes table the first kernel row is the slowed kernel (its op may rank next to it).
  const size_t table = slow.out.find("Top changes");
  ASSERT_NE(table, std::string::npos) << slow.out;
  const size_t row = slow.out.find(" kernel ", table + 40);
  ASSERT_NE(row, std::string::npos) << slow.out;
  EXPECT_EQ(slow.out.find(kSlowed, row), slow.out.find(kSlowed, table)) << slow.out;
  EXPECT_LT(slow.out.find(kSlowed, row), slow.out.find('\n', row)) << slow.out;
}

// Recorded without the torch plugin (no step table, no ranges): the steps come
// from the repeating kernel launch sequence, and the gate still works.
TEST(DiffCli, StepsFromTheLaunchSequenceWithoutAStepTable) {
  RunSpec plain = base_spec(), slow = slowed(8);
  plain.write_steps = slow.write_steps = false;
  const std::string table = run("table.db", base_spec()), a = run("seq_a.db", plain), c = run("seq_c.db", slow);
  Result same = gpuscope("diff " + table + " " + a);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("kernel launch sequence, repeating every 7 launches"), std::string::npos) << same.out;
  Result slower = gpuscope("diff " + a + " " + c);
  EXPECT_EQ(slower.code, 1) << slower.out << slower.err;
  EXPECT_NE(slower.out.find(std::string("behind it: kernel ") + kSlowed), std::string::npos) << slower.out;
}

TEST(DiffCli, ReportsWrittenAndNeverOverwrittenWithoutForce) {
  const std::string a = run("r1.db", base_spec()), c = run("r2.db", slowed(9));
  const std::string dir = fs::path(a).parent_path().string() + "/reports";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string md = dir + "/d.md", xml = dir + "/d.xml", js = dir + "/d.json", html = dir + "/d.html";
  const std::string outs = " --markdown " + md + " --junit " + xml + " --json " + js + " --html " + html;
  Result r = gpuscope("diff -q " + a + " " + c + outs);
  ASSERT_EQ(r.code, 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  for (const auto& p : {md, xml, js, html}) EXPECT_GT(fs::file_size(p), 500u) << p;
  const auto j = nlohmann::json::parse(std::ifstream(js));
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["kernels"][0]["name"].get<std::string>().rfind(kSlowed, 0), 0u);
  const auto size = fs::file_size(md);

  expect_one_line_error(gpuscope("diff " + a + " " + c + " --markdown " + md), "already exists; use --force");
  EXPECT_EQ(fs::file_size(md), size);
  Result forced = gpuscope("diff " + a + " " + a + " --force --markdown " + md + " --json -");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(fs::file_size(md), size);
  EXPECT_EQ(nlohmann::json::parse(forced.out)["verdict"], "no_change") << "the JSON went to stdout, alone";
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temporary file left: " << e.path();
}

TEST(DiffCli, BadInputIsOneLineAndExitTwo) {
  const std::string good = run("good.db", base_spec());
  expect_one_line_error(gpuscope("diff /nonexistent/base.db " + good), "/nonexistent/base.db: no such file");

  const std::string text = temp_path("notes.txt");
  std::ofstream(text) << "hello, not a recording\n";
  expect_one_line_error(gpuscope("diff " + good + " " + text), "not a gpuscope recording");

  const std::string newer = run("newer.db", base_spec());
  {
    store::Connection c(newer, store::Connection::Mode::kReadWrite);
    c.exec("UPDATE meta SET value='99' WHERE key='schema_version'");
  }
  expect_one_line_error(gpuscope("diff " + good + " " + newer), "newer gpuscope");

  const std::string empty = temp_path("empty.db");
  { store::Writer w(empty); }
  expect_one_line_error(gpuscope("diff " + empty + " " + good), "empty recording");

  // No step table, and too few steps for the kernel launch sequence to repeat.
  RunSpec no_steps = base_spec();
  no_steps.write_steps = false;
  no_steps.steps = 3;
  const std::string ns = run("nosteps.db", no_steps);
  expect_one_line_error(gpuscope("diff " + good + " " + ns), "nosteps.db: no steps found");

  RunSpec few = base_spec();
  few.steps = 4;
  const std::string f = run("few.db", few);
  expect_one_line_error(gpuscope("diff " + f + " " + good), "few.db: only 3 analysed step(s)");

  expect_one_line_error(gpuscope("diff " + good + " " + good + " --threshold abc"), "--threshold: expected a percentage");
  EXPECT_EQ(gpuscope("diff " + good).code, 2);
  EXPECT_EQ(gpuscope("diff " + good + " " + good + " --alpha 2").code, 2);

  // A bad second input leaves no report behind.
  const std::string md = temp_path("never.md");
  expect_one_line_error(gpuscope("diff " + good + " " + ns + " --markdown " + md), "no steps found");
  EXPECT_FALSE(fs::exists(md));
}

TEST(DiffCli, TorchProfilerTraceWorksLikeARecording) {
  const std::string trace = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/torch113_cpu_mlp.json.gz";
  const std::string tmp = fs::path(temp_path("x")).parent_path().string() + "/tmpdir";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  Result r = gpuscope("diff " + trace + " " + trace + " --json -", "TMPDIR=" + tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "no_change");
  EXPECT_EQ(j["base"]["recording"], "torch113_cpu_mlp.json.gz");
  EXPECT_GE(j["base"]["steps"].get<int>(), 5);
  EXPECT_GT(j["ops"].size(), 3u);
  EXPECT_EQ(j["top_changes"].size(), 0u) << "a trace against itself changes nothing";
  // The imported copy lives only as long as the command.
  for (const auto& e : fs::directory_iterator(tmp)) ADD_FAILURE() << "left behind: " << e.path();
}

TEST(DiffCli, CheckBudget) {
  const std::string rec = run("check.db", base_spec());
  const std::string dir = fs::path(rec).parent_path().string();
  auto budget = [&](const std::string& name, const std::string& text) {
    const std::string p = dir + "/" + name;
    std::ofstream(p) << text;
    return p;
  };
  const std::string ok = budget("ok.json", R"({"max_step_ms_median": 50, "forbid_findings": ["pageable-memcpy"]})");
  Result pass = gpuscope("check " + rec + " --budget " + ok);
  EXPECT_EQ(pass.code, 0) << pass.out << pass.err;
  EXPECT_EQ(pass.out.rfind("gpuscope check: PASS", 0), 0u) << pass.out;

  const std::string tight = budget("tight.json", R"({"max_step_ms_median": 1.0, "max_peak_memory_bytes": 1000})");
  const std::string xml = dir + "/check.xml";
  fs::remove(xml);
  Result fail = gpuscope("check " + rec + " --budget " + tight + " --junit " + xml);
  EXPECT_EQ(fail.code, 1) << fail.out << fail.err;
  EXPECT_NE(fail.out.find("FAIL max_step_ms_median"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("FAIL max_peak_memory_bytes"), std::string::npos) << fail.out;
  std::ifstream x(xml);
  const std::string junit((std::istreambuf_iterator<char>(x)), {});
  EXPECT_NE(junit.find("tests=\"2\" failures=\"2\""), std::string::npos) << junit;

  expect_one_line_error(gpuscope("check " + rec + " --budget " + budget("typo.json", R"({"max_step_ms": 5})")),
                        "typo.json: unknown key \"max_step_ms\"");
  expect_one_line_error(gpuscope("check " + rec + " --budget " + dir + "/missing.json"), "missing.json: cannot read");
  RunSpec no_mem = base_spec();
  no_mem.peak_reserved = 0;
  const std::string nm = run("nomem.db", no_mem);
  expect_one_line_error(gpuscope("check " + nm + " --budget " + tight), "holds no memory events");
  RunSpec no_steps = base_spec();
  no_steps.write_steps = false;
  no_steps.steps = 3;
  expect_one_line_error(gpuscope("check " + run("cnosteps.db", no_steps) + " --budget " + ok), "no steps found");
}

// Recordings from the GPU machine (tests/gpu/diff_check.sh copies them to its
// output as diff_*_h200.db): the same configuration twice passes, the variant
// with the sin kernel made slower fails and names that kernel first.
TEST(DiffCli, GpuFixtures) {
  const fs::path data = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data";
  const std::string base = (data / "diff_base_h200.db").string(), rerun = (data / "diff_rerun_h200.db").string(),
                    slow = (data / "diff_slow_h200.db").string();
  if (!fs::exists(base) || !fs::exists(rerun) || !fs::exists(slow))
    GTEST_SKIP() << "no GPU fixtures yet: run tests/gpu/diff_check.sh on the GPU machine and commit diff_*_h200.db";
  Result same = gpuscope("diff " + base + " " + rerun);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
  Result r = gpuscope("diff " + base + " " + slow + " --json -");
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string first = j["kernels"][0]["name"];
  EXPECT_NE(first.find("sin_kernel"), std::string::npos) << first;
  EXPECT_GE(j["kernels"][0]["delta_pct"].get<double>(), 10.0) << "the kernel is at least 10 % slower in total";
}

TEST(DiffCli, Help) {
  Result d = gpuscope("diff --help");
  EXPECT_EQ(d.code, 0);
  EXPECT_NE(d.out.find("--threshold"), std::string::npos);
  EXPECT_NE(d.out.find("--junit"), std::string::npos);
  Result c = gpuscope("check --help");
  EXPECT_EQ(c.code, 0);
  EXPECT_NE(c.out.find("--budget"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::testing
