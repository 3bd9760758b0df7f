// A distributed job's ranks (analyzer/ranks.cpp) and the cross-rank rules
// (rules/straggler.cpp, rules/collective_wait.cpp) on synthetic gloo jobs of
// four ranks in lockstep, where the numbers are known by construction.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "analyzer/ranks.h"
#include "trace_formats/common/error.h"
#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

analyzer::Analysis straggler_job(const std::string& stem, int64_t extra_ns, const analyzer::Options& opt = {}) {
  const std::string path = temp_db(stem);
  std::vector<int64_t> extra(4, 0);
  extra[2] = extra_ns;
  write_ranks_scenario(extra, path);
  return analyze_path(path, opt);
}

TEST(Ranks, EveryRankSummarized) {
  auto a = straggler_job("ranks-straggler", ms(20));
  ASSERT_EQ(a.ranks.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const auto& x = a.ranks[static_cast<size_t>(r)];
    EXPECT_EQ(x.rank, r);
    EXPECT_EQ(x.pid, 5000 + r);
    EXPECT_EQ(x.host, "node0");
    EXPECT_EQ(x.device, -1);
    EXPECT_LT(x.gpu_utilization, 0) << "no GPU: utilization unknown";
    EXPECT_EQ(x.steps, 11) << "12 steps less the warm-up step";
    // Steps are the same length on every rank: they leave each all-reduce together.
    EXPECT_NEAR(x.step_ms_median, 36.3, 0.2);
    EXPECT_NEAR(x.compute_ms_per_step, 15.4, 0.05);  // the linear and optimizer ops
    // Everyone but rank 2 waits for rank 2's extra 20 ms, plus the transfer.
    EXPECT_NEAR(x.collective_ms_per_step, r == 2 ? 0.5 : 20.5, 0.1) << "rank " << r;
    EXPECT_NEAR(x.data_ms_per_step, r == 2 ? 20.3 : 0.3, 0.05) << "rank " << r;
  }
}

TEST(Ranks, StragglerIsTheTopFindingAndNamesTheRank) {
  auto a = straggler_job("ranks-straggler-top", ms(20));
  ASSERT_FALSE(a.findings.empty());
  const auto& f = a.findings.front();
  ASSERT_EQ(f.id, "straggler") << finding_list(a);
  EXPECT_EQ(metric(f, "straggler_rank"), 2);
  EXPECT_NEAR(metric(f, "extra_ms_per_step"), 20, 0.1);
  EXPECT_NEAR(f.saving_ms_per_step, 20, 0.1);
  EXPECT_NEAR(metric(f, "straggler_data_ms_per_step") - metric(f, "others_data_ms_per_step"), 20, 0.1);
  ASSERT_FALSE(f.evidence.top.empty());
  EXPECT_EQ(f.evidence.top.front().name, "loading data (DataLoader)") << "its extra time goes to its DataLoader";
  EXPECT_NE(f.evidence.summary.find("Rank 2"), std::string::npos) << f.evidence.summary;
  EXPECT_NE(f.fix.code.find("--rank 2"), std::string::npos);
  EXPECT_EQ(f.severity, analyzer::Severity::kHigh);

  const analyzer::Finding* w = find(a, "collective-wait");
  ASSERT_NE(w, nullptr) << finding_list(a);
  EXPECT_NEAR(metric(*w, "others_wait_ms_per_step"), 20, 0.1);
  EXPECT_NEAR(w->saving_ms_per_step, 15, 0.1) << "evened out, every rank's step shortens by 20 - 20/4 ms";
  EXPECT_EQ(metric(*w, "last_arrival_rank"), 2);
}

TEST(Ranks, EvenJobHasNoCrossRankFinding) {
  auto a = straggler_job("ranks-even", 0);
  EXPECT_EQ(find(a, "straggler"), nullptr) << finding_list(a);
  EXPECT_EQ(find(a, "collective-wait"), nullptr) << finding_list(a);
  ASSERT_EQ(a.ranks.size(), 4u);
  for (const auto& r : a.ranks) EXPECT_NEAR(r.collective_ms_per_step, 0.5, 0.1);
  // A small imbalance (3 % of the step) stays below the thresholds.
  auto b = straggler_job("ranks-small", us(500));
  EXPECT_EQ(find(b, "straggler"), nullptr) << finding_list(b);
  EXPECT_EQ(find(b, "collective-wait"), nullptr) << finding_list(b);
}

TEST(Ranks, RankOptionAnalysesThatRank) {
  analyzer::Options opt;
  opt.rank = 2;
  auto a = straggler_job("ranks-rank2", ms(20), opt);
  EXPECT_EQ(a.summary.pid, 5002);
  ASSERT_EQ(a.ranks.size(), 4u);
  for (const auto& r : a.ranks) EXPECT_EQ(r.analysed, r.rank == 2);
  EXPECT_EQ(a.findings.front().id, "straggler") << "cross-rank findings whichever rank is analysed";
  opt.rank = 7;
  try {
    straggler_job("ranks-rank7", ms(20), opt);
    FAIL() << "rank 7 does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no process with rank 7 (ranks: 0, 1, 2, 3)"), std::string::npos) << e.what();
  }
}

// On GPUs the wait is the NCCL kernel time no other GPU work covers: each rank's
// all-reduce kernel starts when its own compute ends and ends when the last rank
// (2, whose DataLoader takes 20 ms longer) has contributed.
TEST(Ranks, ExposedNcclKernelsAreTheWaitOnGpus) {
  const std::string path = temp_db("ranks-nccl");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  for (int r = 0; r < 4; ++r) {
    Sim s(path, Sim::rank_of(6000, r, 4));
    int64_t t = ms(1);
    for (int k = 0; k < 10; ++k) {
      s.cpu(t - s.now());
      s.step_begin();
      s.dataloader(us(200) + (r == 2 ? ms(20) : 0));
      s.op_begin("aten::mm");
      s.kernel(names::kGemmBf16, ms(10));
      s.op_end();
      const int64_t done = t + ms(32);  // after the slowest rank's compute, plus the transfer
      s.recording().kernel({.context = 1, .stream = 9, .start = s.gpu_idle_at(), .end = done, .name = names::kNccl});
      s.cpu(done + us(20) - s.now());  // the step's sync
      s.op("Optimizer.step#SGD.step", us(100));
      s.step_end();
      t = s.now() + us(10);
    }
  }
  auto a = analyze_path(path);
  ASSERT_EQ(a.ranks.size(), 4u);
  for (const auto& r : a.ranks) {
    EXPECT_EQ(r.device, 0);
    // Compute and NCCL kernels fill the step but for the DataLoader wait.
    EXPECT_NEAR(r.gpu_utilization, r.rank == 2 ? 0.37 : 0.99, 0.02) << "rank " << r.rank;
  }
  EXPECT_NEAR(a.ranks[0].collective_ms_per_step - a.ranks[2].collective_ms_per_step, 20, 0.1);
  ASSERT_FALSE(a.findings.empty());
  EXPECT_EQ(a.findings.front().id, "straggler") << finding_list(a);
  EXPECT_EQ(metric(a.findings.front(), "straggler_rank"), 2);
  EXPECT_NEAR(metric(a.findings.front(), "extra_ms_per_step"), 20, 0.1);
}

// How much of the NCCL kernel time compute hides, as HTA's get_comm_comp_overlap
// counts it (scenario "nccl-overlap"): rank 0's all-reduce starts 6 ms into a
// 10 ms compute kernel and runs 8 ms (4 ms overlapped, 50 %); rank 1's runs
// inside its compute (100 %). A copy beside rank 0's exposed part is not compute.
TEST(Ranks, NcclOverlapWithComputeAsHtaCountsIt) {
  const std::string path = temp_db("ranks-overlap");
  write_scenario("nccl-overlap", true, path);
  auto a = analyze_path(path);
  ASSERT_EQ(a.ranks.size(), 2u);
  EXPECT_NEAR(a.ranks[0].comm_overlap_pct, 50, 0.5);
  EXPECT_NEAR(a.ranks[1].comm_overlap_pct, 100, 0.5);
  for (const auto& r : a.ranks) EXPECT_NEAR(r.communication_ms_per_step, 8, 0.05) << "rank " << r.rank;
  auto j = nlohmann::json::parse(analyzer::to_json(a));
  EXPECT_NEAR(j["ranks"][0]["comm_overlap_pct"].template get<double>(), 50, 0.5);
  EXPECT_NE(analyzer::to_text(a).find("overlapped"), std::string::npos);
  EXPECT_NE(analyzer::to_markdown(a).find("NCCL overlapped by compute"), std::string::npos);
  EXPECT_NE(analyzer::to_html(a).find("NCCL overlapped by compute"), std::string::npos);
  // gloo on the CPU: no NCCL kernels, no overlap column.
  auto gloo = straggler_job("ranks-overlap-gloo", ms(20));
  EXPECT_LT(gloo.ranks[0].comm_overlap_pct, 0);
  EXPECT_TRUE(nlohmann::json::parse(analyzer::to_json(gloo))["ranks"][0]["comm_overlap_pct"].is_null());
  EXPECT_EQ(analyzer::to_text(gloo).find("overlapped"), std::string::npos);
}

TEST(Ranks, EveryReportFormatHasTheRanks) {
  auto a = straggler_job("ranks-formats", ms(20));
  auto j = nlohmann::json::parse(analyzer::to_json(a));
  ASSERT_TRUE(j.contains("ranks"));
  ASSERT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"][2]["rank"], 2);
  EXPECT_TRUE(j["ranks"][2]["device"].is_null());
  EXPECT_TRUE(j["ranks"][2]["gpu_utilization"].is_null());
  EXPECT_NEAR(j["ranks"][0]["collective_ms_per_step"].template get<double>(), 20.5, 0.1);
  EXPECT_NE(analyzer::to_text(a).find("\nRanks ("), std::string::npos);
  EXPECT_NE(analyzer::to_markdown(a).find("## Ranks"), std::string::npos);
  EXPECT_NE(analyzer::to_html(a).find("<h2>Ranks</h2>"), std::string::npos);
  // One process: no ranks key, reports keep their shape.
  auto one = analyze_scenario("healthy");
  EXPECT_TRUE(one.ranks.empty());
  EXPECT_FALSE(nlohmann::json::parse(analyzer::to_json(one)).contains("ranks"));
}

// gpuscope cluster's reduce: the passes of several files give analyze's report
// of the file holding them all, and the process whose step the savings are a
// share of is the one analyze would pick in the merged file.
analyzer::RankPass pass_of(int64_t first_pid, int ranks, int tier, int64_t value, int64_t chosen_pid) {
  analyzer::RankPass p;
  for (int i = 0; i < ranks; ++i) {
    analyzer::RankPass::Process r;
    r.summary.pid = first_pid + i;
    r.summary.rank = first_pid - 1000 + i;
    r.summary.steps = 10;
    r.summary.own_ms_median = r.summary.pid == 1002 ? 30 : 10;  // rank 2 the straggler
    r.summary.collective_ms_median = r.summary.pid == 1002 ? 0.5 : 20.5;
    r.step_ms_mean = static_cast<double>(r.summary.pid) / 10;  // tells which process was picked
    p.ranks.push_back(r);
  }
  p.choice = {chosen_pid, tier, value, 0};
  return p;
}

TEST(Ranks, CrossRankReportPicksTheProcessAnalyzeWould) {
  auto picked = [](std::vector<analyzer::RankPass> passes) {
    const analyzer::Analysis a = analyzer::cross_rank_report(passes);
    int64_t marked = -1;
    for (const auto& r : a.ranks)
      if (r.analysed) marked = r.pid;
    EXPECT_EQ(marked, a.summary.pid);
    EXPECT_EQ(a.summary.step_ms_mean, static_cast<double>(a.summary.pid) / 10);
    return a.summary.pid;
  };
  // The lowest tier, then the largest value.
  EXPECT_EQ(picked({pass_of(1000, 2, 2, 50, 1001), pass_of(1002, 2, 1, 10, 1002)}), 1002);
  EXPECT_EQ(picked({pass_of(1000, 2, 1, 10, 1001), pass_of(1002, 2, 1, 20, 1003)}), 1003);
  // Ties: the collector's counts (tier 1) keep the file order, the others go by pid.
  EXPECT_EQ(picked({pass_of(1002, 2, 1, 10, 1003), pass_of(1000, 2, 1, 10, 1000)}), 1003);
  EXPECT_EQ(picked({pass_of(1002, 2, 2, 10, 1003), pass_of(1000, 2, 2, 10, 1000)}), 1000);
  const analyzer::Analysis a = analyzer::cross_rank_report({pass_of(1000, 2, 1, 10, 1000), pass_of(1002, 2, 1, 10, 1002)});
  ASSERT_EQ(a.ranks.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a.ranks[i].rank, static_cast<int64_t>(i));
  ASSERT_NE(find(a, "straggler"), nullptr) << finding_list(a);
  EXPECT_EQ(metric(*find(a, "straggler"), "straggler_rank"), 2);
  EXPECT_NEAR(find(a, "straggler")->saving_pct, 100 * 20 / 100.0, 1e-9) << "a share of pid 1000's 100 ms step";
  // The picked process with nothing to analyse fails the report, as analyze fails.
  auto broken = pass_of(1000, 2, 1, 10, 1000);
  broken.ranks[0].error = "r.db: process 1000 has no timed events to analyse";
  EXPECT_THROW(analyzer::cross_rank_report({broken, pass_of(1002, 2, 1, 5, 1002)}), Error);
  EXPECT_THROW(analyzer::cross_rank_report({pass_of(1000, 1, 1, 5, 1000)}), Error) << "one rank";
}

}  // namespace
}  // namespace gpuscope::testing
