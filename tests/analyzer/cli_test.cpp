// `gpuscope analyze` on bad input: one line naming the file and the problem,
// exit 2, no partial output; reports for recordings that lack GPU activity.
#include <gtest/gtest.h>


#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "trace_formats/store/sqlite.h"
#include "trace_formats/store/writer.h"
#include "tests/analyzer/scenarios.h"
#include "tests/support/gpuscope_command.h"

namespace gpuscope::testing {
namespace {

namespace fs = std::filesystem;

using Result = CommandResult;

Result gpuscope(const std::string& args, const std::string& env = "") {
  return run_gpuscope(args, temp_db("stderr").substr(0, temp_db("stderr").size() - 3) + ".txt", env);
}

// "1.45": as the text report writes a step.
std::string analyzer_ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

TEST(AnalyzeCli, MissingFile) { expect_one_line_error(gpuscope("analyze /nonexistent/run.db"), "/nonexistent/run.db: no such file"); }

TEST(AnalyzeCli, NotADatabase) {
  const std::string p = temp_db("text");
  std::ofstream(p) << "hello, not sqlite\n";
  expect_one_line_error(gpuscope("analyze " + p), "not a gpuscope recording");
}

TEST(AnalyzeCli, SqliteButNotARecording) {
  const std::string p = temp_db("foreign");
  fs::remove(p);
  {
    store::Connection c(p, store::Connection::Mode::kCreate);
    c.exec("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES(1);");
  }
  expect_one_line_error(gpuscope("analyze " + p), "not a gpuscope recording");
}

TEST(AnalyzeCli, NewerSchema) {
  const std::string p = temp_db("newer");
  write_scenario("healthy", true, p);
  {
    store::Connection c(p, store::Connection::Mode::kReadWrite);
    c.exec("UPDATE meta SET value='99' WHERE key='schema_version'");
  }
  expect_one_line_error(gpuscope("analyze " + p), "newer gpuscope");
}

TEST(AnalyzeCli, EmptyRecording) {
  const std::string p = temp_db("empty");
  fs::remove(p);
  { store::Writer w(p); }
  expect_one_line_error(gpuscope("analyze " + p), "empty recording");
}

TEST(AnalyzeCli, NoGpuActivityIsAReportNotAnError) {
  const std::string p = temp_db("nogpu");
  write_scenario("no_gpu", true, p);
  Result r = gpuscope("analyze " + p);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no GPU activity recorded: cupti_status=not used"), std::string::npos) << r.out;
}

TEST(AnalyzeCli, BadOptions) {
  const std::string p = temp_db("opts");
  write_scenario("healthy", true, p);
  expect_one_line_error(gpuscope("analyze " + p + " --steps 30-40"), "no steps numbered 30-40");
  expect_one_line_error(gpuscope("analyze " + p + " --steps x"), "--steps");
  expect_one_line_error(gpuscope("analyze " + p + " --device 3"), "device 3 has no GPU activity");
  expect_one_line_error(gpuscope("analyze " + p + " --pid 1"), "no process 1");
  EXPECT_EQ(gpuscope("analyze " + p + " --format pdf").code, 2);
}

TEST(AnalyzeCli, RankOption) {
  const std::string p = temp_db("ranks");
  write_scenario("straggler", true, p);
  Result r = gpuscope("analyze " + p + " --rank 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("process 5002 (rank 2 of 4)"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("\nRanks ("), std::string::npos);
  EXPECT_NE(r.out.find("straggler"), std::string::npos);
  expect_one_line_error(gpuscope("analyze " + p + " --rank 9"), "no process with rank 9 (ranks: 0, 1, 2, 3)");
  EXPECT_EQ(gpuscope("analyze " + p + " --rank 1 --pid 5001").code, 2) << "--rank and --pid exclude each other";
  const std::string one = temp_db("norank");
  write_scenario("healthy", true, one);
  expect_one_line_error(gpuscope("analyze " + one + " --rank 0"), "no process has a rank");
}

TEST(AnalyzeCli, OutputFileNeverOverwrittenWithoutForce) {
  const std::string p = temp_db("out");
  write_scenario("host-sync", true, p);
  const std::string out = p + ".html";
  fs::remove(out);
  Result r = gpuscope("analyze " + p + " --format html -o " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  ASSERT_TRUE(fs::exists(out));
  const auto size = fs::file_size(out);
  EXPECT_GT(size, 1000u);
  expect_one_line_error(gpuscope("analyze " + p + " --format json -o " + out), "already exists; use --force");
  EXPECT_EQ(fs::file_size(out), size);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --force -o " + out).code, 0);
  EXPECT_NE(fs::file_size(out), size);
  for (const auto& e : fs::directory_iterator(fs::path(out).parent_path()))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temporary file left: " << e.path();
}

// `-o ''` was stdout with exit 0 (issue 50): an empty name is refused at once.
TEST(AnalyzeCli, AnEmptyOutputNameIsRefused) {
  const std::string p = temp_db("emptyout");
  write_scenario("healthy", true, p);
  expect_one_line_error(gpuscope("analyze " + p + " -o ''"), "--output: wants a file name, not an empty one");
  expect_one_line_error(gpuscope("analyze " + p + " --output=''"), "--output: ");  // CLI11: "1 required TEXT:FILE missing"
}

// `--what-if amp+amp` listed the copy as "does not apply", fifty `--what-if amp`
// planned fifty times (issue 50): each fix once per combination, each
// combination (in any order) once, and one line on stderr says what was left out.
TEST(AnalyzeCli, WhatIfRepeatsArePlannedOnce) {
  const std::string p = temp_db("whatif_repeats");
  write_scenario("host-sync", true, p);
  std::string args = "analyze " + p + " --format json --what-if amp+amp --what-if host-sync+amp";
  for (int i = 0; i < 50; ++i) args += " --what-if amp";
  args += " --what-if amp+host-sync";
  Result r = gpuscope(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("gpuscope: note: --what-if: each fix and each combination is planned once ('amp+amp' names "
                       "amp twice; 'amp' given 51 times; 'host-sync+amp' given 2 times)"),
            std::string::npos)
      << r.err;
  const auto asked = nlohmann::json::parse(r.out)["whatif"]["asked"];
  ASSERT_EQ(asked.size(), 2u) << asked.dump();
  EXPECT_EQ(asked[0]["asked"], nlohmann::json::array({"amp"})) << asked.dump();
  EXPECT_EQ(asked[1]["asked"], nlohmann::json::array({"host-sync", "amp"})) << asked.dump();
  for (const auto& a : asked) EXPECT_EQ(a["skipped"].size() + a["fixes"].size(), a["asked"].size()) << a.dump();
}

TEST(AnalyzeCli, FailOnSavingGatesCi) {
  const std::string p = temp_db("gate");
  write_scenario("host-sync", true, p);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --fail-on-saving 5").code, 1);
  EXPECT_EQ(gpuscope("analyze " + p + " --format json --fail-on-saving 90").code, 0);
}

TEST(AnalyzeCli, ListRules) {
  Result r = gpuscope("analyze --list-rules");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("### `dataloader-stall`"), std::string::npos);
  EXPECT_NE(r.out.find("kAmpSpeedup"), std::string::npos);
  EXPECT_NE(r.out.find("### `straggler`"), std::string::npos) << "cross-rank rules are listed too";
}

// Learning from measurements (docs/try.md): `gpuscope try`'s history and
// `gpuscope calibrate`'s tables in the cache, on a committed H200 recording
// whose plan starts with amp (predicted -35.7 %; no built-in H200 table).
const std::string kH200 = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/diff_base_h200.db";

// An empty cache folder of its own for each test; `history` its try_history.jsonl.
std::string cache_dir(const std::string& stem, const std::string& history = "") {
  const std::string dir = temp_db(stem).substr(0, temp_db(stem).size() - 3) + "_cache";
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (!history.empty()) std::ofstream(dir + "/try_history.jsonl") << history;
  return dir;
}

std::string amp_try(double measured, double lo, double hi) {
  return R"({"time_utc_s": 1, "gpu": "NVIDIA H200", "torch": "2.11", "device": "cuda", "fix": "amp", "fixes": ["amp"], )"
         R"("baseline_ms": 2.3, "step_ms": 1.8, "measured_saving_pct": )" + std::to_string(measured) +
         R"(, "measured_range_pct": [)" + std::to_string(lo) + ", " + std::to_string(hi) +
         R"(], "significant": true, "predicted_saving_pct": 35.0, "predicted_range_pct": [30.0, 38.0], "within_range": false})"
         "\n";
}

const nlohmann::json& amp_entry(const nlohmann::json& report) {
  const auto& plan = report.at("whatif").at("plan");
  EXPECT_FALSE(plan.empty());
  EXPECT_EQ(plan.at(0).at("fixes"), nlohmann::json::array({"amp"})) << plan.dump();
  return plan.at(0);
}

TEST(AnalyzeCli, TriesOnThisGpuCorrectThePlan) {
  const std::string empty = cache_dir("hist-empty");
  Result before = gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + empty);
  ASSERT_EQ(before.code, 0) << before.err;
  const auto b = nlohmann::json::parse(before.out);
  EXPECT_FALSE(b["whatif"].contains("history"));
  EXPECT_FALSE(amp_entry(b).contains("tries"));
  const double replay_ms = amp_entry(b)["step_ms"].get<double>();

  // Three tries of amp on this GPU measured 20, 22 and 25 % against 35 %
  // predicted; a damaged line; a try on another GPU.
  const std::string history = amp_try(20, 19, 21) + amp_try(22, 21, 23) + "{\"gpu\": \"NVIDIA H200\", \"fix\n" +
                              amp_try(25, 24, 26) +
                              R"({"gpu": "NVIDIA H100 80GB HBM3", "fixes": ["amp"], "measured_saving_pct": 60, "predicted_saving_pct": 10})"
                              "\n";
  const std::string cache = cache_dir("hist-three", history);
  Result r = gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + cache);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(cache + "/try_history.jsonl: 1 damaged line skipped"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& h = j["whatif"]["history"];
  EXPECT_EQ(h["gpu"], "NVIDIA H200");
  EXPECT_EQ(h["tries"], 3);
  EXPECT_EQ(h["damaged_lines"], 1);
  const auto& amp = amp_entry(j);
  ASSERT_TRUE(amp.contains("tries")) << amp.dump();
  EXPECT_EQ(amp["tries"]["count"], 3);
  EXPECT_EQ(amp["tries"]["corrected"], true);
  EXPECT_DOUBLE_EQ(amp["tries"]["uncorrected_step_ms"].get<double>(), replay_ms);
  // The median try (22 % measured, 35 % predicted): the step 0.78 / 0.65 of the replay's.
  EXPECT_NEAR(amp["step_ms"].get<double>(), replay_ms * 0.78 / 0.65, 0.002) << amp.dump();
  EXPECT_LT(amp["step_range_ms"][0].get<double>(), amp["step_ms"].get<double>());
  EXPECT_GT(amp["step_range_ms"][1].get<double>(), amp["step_ms"].get<double>());
  // The finding for amp takes the corrected saving: the replay's step for amp
  // (1 - 35.75 %) times 0.78 / 0.65, 22.9 %.
  const double saving = 100 * (1 - (1 - amp_entry(b)["saving_pct"].get<double>() / 100) * 0.78 / 0.65);
  bool found = false;
  for (const auto& f : j["findings"])
    if (f["id"] == "amp") {
      found = true;
      EXPECT_NEAR(f["saving_pct"].get<double>(), saving, 0.05) << f.dump();
    }
  EXPECT_TRUE(found);

  Result text = gpuscope("analyze " + kH200, "GPUSCOPE_CACHE_DIR=" + cache);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("calibrated by 3 tries on this machine (NVIDIA H200): the replay alone " +
                          analyzer_ms(replay_ms)),
            std::string::npos)
      << text.out;
  Result md = gpuscope("analyze " + kH200 + " --format md", "GPUSCOPE_CACHE_DIR=" + cache);
  EXPECT_NE(md.out.find("calibrated by 3 tries on this machine"), std::string::npos) << md.out;
}

TEST(AnalyzeCli, NoHistoryGivesTheReportWithoutTries) {
  const std::string empty = cache_dir("nohist-empty");
  const std::string cache = cache_dir("nohist", amp_try(20, 19, 21) + amp_try(22, 21, 23) + amp_try(25, 24, 26) + "x\n");
  for (const char* format : {"json", "text"}) {
    Result plain = gpuscope("analyze " + kH200 + " --format " + format, "GPUSCOPE_CACHE_DIR=" + empty);
    Result off = gpuscope("analyze " + kH200 + " --no-history --format " + format, "GPUSCOPE_CACHE_DIR=" + cache);
    ASSERT_EQ(off.code, 0) << off.err;
    EXPECT_EQ(off.out, plain.out) << format;
    EXPECT_TRUE(off.err.empty()) << off.err;  // the history is not read: no warning for its damaged line
    Result on = gpuscope("analyze " + kH200 + " --format " + format, "GPUSCOPE_CACHE_DIR=" + cache);
    EXPECT_NE(on.out, plain.out) << "the history must change the report for this test to mean anything";
  }
}

TEST(AnalyzeCli, TwoTriesAreCountedButChangeNothing) {
  const std::string empty = cache_dir("two-empty");
  const std::string cache = cache_dir("two", amp_try(20, 19, 21) + amp_try(22, 21, 23));
  const auto b = nlohmann::json::parse(gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + empty).out);
  const auto j = nlohmann::json::parse(gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + cache).out);
  EXPECT_EQ(amp_entry(j)["tries"]["count"], 2);
  EXPECT_EQ(amp_entry(j)["tries"]["corrected"], false);
  EXPECT_EQ(amp_entry(j)["step_ms"], amp_entry(b)["step_ms"]);
  EXPECT_EQ(amp_entry(j)["step_range_ms"], amp_entry(b)["step_range_ms"]);
  Result text = gpuscope("analyze " + kH200, "GPUSCOPE_CACHE_DIR=" + cache);
  EXPECT_NE(text.out.find("2 tries on this machine (NVIDIA H200), 3 needed to calibrate"), std::string::npos) << text.out;
}

TEST(AnalyzeCli, CalibrateTableInTheCacheServesAGpuWithoutABuiltInOne) {
  const std::string empty = cache_dir("cal-empty");
  const auto b = nlohmann::json::parse(gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + empty).out);
  EXPECT_EQ(b["whatif"]["calibration"], "generic.json");
  EXPECT_FALSE(b["whatif"].contains("calibration_file"));

  // What `gpuscope calibrate` would write on an H200: the H100's table, renamed.
  const std::string cache = cache_dir("cal");
  fs::create_directories(cache + "/calibration");
  std::ifstream in(std::string(GPUSCOPE_SOURCE_DIR) + "/analyzer/whatif/calibration/h100.json");
  auto table = nlohmann::json::parse(in);
  table["device"] = "NVIDIA H200";
  table["match"] = "H200";
  std::ofstream(cache + "/calibration/nvidia-h200.json") << table.dump();
  std::ofstream(cache + "/calibration/broken.json") << "{";
  Result r = gpuscope("analyze " + kH200 + " --format json", "GPUSCOPE_CACHE_DIR=" + cache);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;  // the broken table, skipped
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["whatif"]["calibration"], "nvidia-h200.json");
  EXPECT_EQ(j["whatif"]["calibration_file"], cache + "/calibration/nvidia-h200.json");
  EXPECT_EQ(j["whatif"]["calibration_measured"], true);
  // The measured table's ranges are narrower than the generic one's.
  const auto width = [](const nlohmann::json& e) { return e["step_range_ms"][1].get<double>() - e["step_range_ms"][0].get<double>(); };
  EXPECT_LT(width(amp_entry(j)), width(amp_entry(b)));
  Result text = gpuscope("analyze " + kH200, "GPUSCOPE_CACHE_DIR=" + cache);
  EXPECT_NE(text.out.find("calibration nvidia-h200.json (read from " + cache + "/calibration/nvidia-h200.json)"),
            std::string::npos)
      << text.out;

  // --calibration FILE: any table, for any GPU; a bad one is one line naming it.
  Result forced = gpuscope("analyze " + kH200 + " --format json --calibration " + std::string(GPUSCOPE_SOURCE_DIR) +
                               "/analyzer/whatif/calibration/h100.json",
                           "GPUSCOPE_CACHE_DIR=" + empty);
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(nlohmann::json::parse(forced.out)["whatif"]["calibration"], "h100.json");
  const std::string bad = cache + "/bad.json";
  std::ofstream(bad) << R"({"schema": "something-else/1"})";
  expect_one_line_error(gpuscope("analyze " + kH200 + " --calibration " + bad, "GPUSCOPE_CACHE_DIR=" + empty),
                        bad + ": not a calibration table");
  expect_one_line_error(gpuscope("analyze " + kH200 + " --calibration " + cache + "/none.json", "GPUSCOPE_CACHE_DIR=" + empty),
                        cache + "/none.json: no such file");
}

}  // namespace
}  // namespace gpuscope::testing
