// `gpuscope cluster` end to end: 64 synthetic rank files (cluster_bench_gen,
// rank 37 a straggler) analysed on a local Dask cluster of two workers give
// the cross-rank report of `gpuscope analyze` on the merged file and on one
// file holding every rank; files of another job, a file that is not a
// recording and a Python without Dask are refused in one line; -o and --force.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

using json = nlohmann::json;

constexpr int kRanks = 64;
constexpr int kStraggler = 37;
constexpr const char* kCrossRankIds[] = {"straggler", "collective-wait"};

std::string gen() { return std::string(GPUSCOPE_BINARY_DIR) + "/bin/cluster_bench_gen"; }

std::string files(const std::string& dir, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "/node_%04d.db", i);
    s += " " + dir + name;
  }
  return s;
}

// What analyze and cluster must agree on: the ranks and the cross-rank findings.
json cross_rank_part(const json& report) {
  json findings = json::array();
  for (const auto& f : report.at("findings"))
    for (const char* id : kCrossRankIds)
      if (f.at("id") == id) findings.push_back(f);
  return json{{"ranks", report.at("ranks")}, {"findings", findings}};
}

json parse(const Result& r) {
  const size_t at = r.output.find('{');
  EXPECT_NE(at, std::string::npos) << r.output;
  return json::parse(r.output.substr(at == std::string::npos ? 0 : at), nullptr, false);
}

class Cluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const Result g = run(gen() + " " + dir_->file("one") + " " + std::to_string(kRanks) +
                         " --steps 12 --kernels 8 --straggler " + std::to_string(kStraggler) +
                         " --combined " + dir_->file("all.db"));
    ASSERT_EQ(g.exit_code, 0) << g.output;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string rank_files() { return files(dir_->file("one"), kRanks); }
  static TempDir* dir_;
};

TempDir* Cluster::dir_ = nullptr;

TEST_F(Cluster, SameCrossRankReportAsAnalyzeOfTheMergedFile) {
  const Result c = gpuscope("cluster -q --workers 2 --format json" + rank_files());
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const json cluster = parse(c);
  ASSERT_FALSE(cluster.is_discarded()) << c.output;
  EXPECT_EQ(cluster.at("schema"), "gpuscope-cluster/1");

  const std::string merged = dir_->file("merged.db");
  const Result m = gpuscope("merge -q -f" + rank_files() + " -o " + merged);
  ASSERT_EQ(m.exit_code, 0) << m.output;
  for (const std::string& db : {merged, dir_->file("all.db")}) {
    SCOPED_TRACE(db);
    const Result a = gpuscope("analyze --format json " + db);
    ASSERT_EQ(a.exit_code, 0) << a.output;
    const json analyze = parse(a);
    EXPECT_EQ(cross_rank_part(cluster), cross_rank_part(analyze));
    EXPECT_EQ(cluster.at("step").at("pid"), analyze.at("summary").at("pid"));
  }
  // And the report says what was planted, so that the comparison is not of two empty reports.
  const json part = cross_rank_part(cluster);
  ASSERT_EQ(part.at("ranks").size(), static_cast<size_t>(kRanks));
  ASSERT_EQ(part.at("findings").size(), 2u) << cluster.dump(1);
  const json& s = part.at("findings").at(0);
  EXPECT_EQ(s.at("id"), "straggler");
  EXPECT_NEAR(s.at("saving_ms_per_step").get<double>(), 20, 0.01);
  EXPECT_NE(s.at("evidence").at("summary").get<std::string>().find("Rank 37 "), std::string::npos);
}

TEST_F(Cluster, SeveralRanksPerFile) {
  const std::string dir = dir_->file("four");
  const Result g = run(gen() + " " + dir + " 16 --ranks-per-file 4 --steps 12 --kernels 8 --straggler 5 --combined " +
                       dir + "/all.db");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const Result c = gpuscope("cluster -q --workers 2 --format json" + files(dir, 4));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const Result a = gpuscope("analyze --format json " + dir + "/all.db");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const json part = cross_rank_part(parse(c));
  EXPECT_EQ(part, cross_rank_part(parse(a)));
  ASSERT_EQ(part.at("ranks").size(), 16u);
  EXPECT_EQ(part.at("ranks").at(5).at("host"), "node0001");
}

TEST_F(Cluster, TheReduceAloneGivesTheSameReport) {
  // What each Dask task runs, then the reduce on its output, without Dask.
  const std::string summaries = dir_->file("summaries.jsonl");
  const Result s = gpuscope("cluster --summarize -f" + rank_files() + " -o " + summaries);
  ASSERT_EQ(s.exit_code, 0) << s.output;
  const std::string lines = read_file(summaries);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), kRanks) << "one line per file";
  const Result reduced = gpuscope("cluster --from-summaries --format json " + summaries);
  const Result dask = gpuscope("cluster -q --workers 2 --format json" + rank_files());
  ASSERT_EQ(reduced.exit_code, 0) << reduced.output;
  ASSERT_EQ(dask.exit_code, 0) << dask.output;
  EXPECT_EQ(cross_rank_part(parse(reduced)), cross_rank_part(parse(dask)));
  const Result text = gpuscope("cluster --from-summaries " + summaries);
  EXPECT_TRUE(text.has("straggler: One rank is slower")) << text.output;
  EXPECT_TRUE(text.has("64 ranks; savings are a share of the step of rank 0 (pid 20000)")) << text.output;
  const Result md = gpuscope("cluster --from-summaries --format markdown " + summaries);
  EXPECT_TRUE(md.has("## Ranks")) << md.output;
  EXPECT_TRUE(md.has("`collective-wait`")) << md.output;
}

TEST_F(Cluster, FilesOfAnotherJobAreRefusedInOneLine) {
  const std::string other = dir_->file("other");
  ASSERT_EQ(run(gen() + " " + other + " 4 --steps 4 --kernels 2").exit_code, 0);
  const Result r = gpuscope("cluster -q --workers 2" + files(dir_->file("one"), 2) + " " + other + "/node_0002.db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("node_0002.db: another job than ")) << r.output;
  // The reduce checks the summaries too (recordings the client cannot read).
  const std::string mixed = dir_->file("mixed.jsonl");
  ASSERT_EQ(gpuscope("cluster --summarize -f" + files(dir_->file("one"), 2) + " " + other + "/node_0002.db -o " + mixed)
                .exit_code,
            0);
  const Result s = gpuscope("cluster --from-summaries " + mixed);
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_EQ(s.lines(), 1) << s.output;
  EXPECT_TRUE(s.has("another job than ")) << s.output;
}

TEST_F(Cluster, NotARecordingIsRefusedInOneLine) {
  const std::string bad = dir_->file("notes.db");
  write_file(bad, "not a database\n");
  const Result r = gpuscope("cluster -q" + files(dir_->file("one"), 2) + " " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("notes.db")) << r.output;
}

// One rank's file with a table dropped (issue 39): refused in one line naming
// it, without SQL text; --skip-bad leaves it out, says so, and reports the rest.
TEST_F(Cluster, ADamagedRankFileFailsUnlessSkipBad) {
  TempDir tmp;
  const std::string damaged = tmp.file("node_0003.db");
  fs::copy_file(dir_->file("one") + "/node_0003.db", damaged);
  ASSERT_EQ(run("sqlite3 " + damaged + " 'DROP TABLE kernel'").exit_code, 0);
  const Result r = gpuscope("cluster -q --workers 2" + files(dir_->file("one"), 3) + " " + damaged);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has(damaged + ": damaged recording: table kernel missing")) << r.output;
  EXPECT_FALSE(r.has("SELECT")) << r.output;

  const Result s = gpuscope("cluster -q --workers 2 --skip-bad --format json" + files(dir_->file("one"), 3) + " " + damaged);
  EXPECT_EQ(s.exit_code, 0) << s.output;
  EXPECT_TRUE(s.has("gpuscope: cluster: skipped " + damaged + ": damaged recording")) << s.output;
  const json j = parse(s);
  ASSERT_TRUE(j.is_object()) << s.output;
  EXPECT_EQ(j.at("ranks").size(), 3u) << s.output;
}

TEST_F(Cluster, DaskMissingIsSaidInOneLine) {
  // A PYTHONPATH shim that makes `import distributed` fail as on a machine without the package.
  const std::string shim = dir_->file("shim/distributed");
  fs::create_directories(shim);
  write_file(shim + "/__init__.py", "raise ImportError('No module named distributed')\n");
  const std::string out = dir_->file("nodask.txt");
  const Result r = run("PYTHONPATH=" + dir_->file("shim") + " " + bin() + " cluster -q" + rank_files() + " -o " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("gpuscope: error: cluster: python3-distributed is not installed: apt-get install python3-distributed"))
      << r.output;
  EXPECT_FALSE(fs::exists(out)) << "no partial report";
  // No Python at all.
  const Result p = run("GPUSCOPE_PYTHON=/nonexistent/python3 " + bin() + " cluster -q" + rank_files());
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_EQ(p.lines(), 1) << p.output;
  EXPECT_TRUE(p.has("cannot run /nonexistent/python3")) << p.output;
}

TEST_F(Cluster, AnExistingOutputNeedsForce) {
  const std::string dir = dir_->file("out");
  fs::create_directories(dir);
  const std::string out = dir + "/report.md";
  write_file(out, "keep me\n");
  const std::string summaries = dir_->file("force.jsonl");
  ASSERT_EQ(gpuscope("cluster --summarize -f" + files(dir_->file("one"), 4) + " -o " + summaries).exit_code, 0);
  const Result r = gpuscope("cluster --from-summaries --format markdown " + summaries + " -o " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("exists")) << r.output;
  EXPECT_EQ(read_file(out), "keep me\n");
  // Refused before any worker starts.
  const Result d = gpuscope("cluster -q" + files(dir_->file("one"), 4) + " -o " + out);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_EQ(read_file(out), "keep me\n");
  const Result f = gpuscope("cluster -q --workers 2 --force --format markdown" + files(dir_->file("one"), 4) + " -o " + out);
  ASSERT_EQ(f.exit_code, 0) << f.output;
  EXPECT_EQ(f.output, "") << "the report goes to the file";
  EXPECT_NE(read_file(out).find("# gpuscope cluster: 4 recordings"), std::string::npos) << read_file(out);
  EXPECT_EQ(listing(dir), std::vector<std::string>{"report.md"}) << "no temporary file left";
}

}  // namespace
}  // namespace gpuscope::cli::test
