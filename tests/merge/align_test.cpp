// merge/align.cpp on planted collectives: two "nodes" of two ranks, one on a
// clock shifted by a known offset, the ranks leaving each collective a little
// apart.
#include "merge/align.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "trace_formats/store/reader.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope::merge {
namespace {

constexpr int64_t kMs = 1'000'000;
using Steps = std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>>;

struct Node {
  std::vector<CollectiveEvent> events;
  Steps steps;
};

// `steps` steps of 20 ms from t=0 on the true clock, each with two all-reduces
// ending at 8 and 15 ms, seen on `clock_offset` (the node's time = true time +
// clock_offset). Rank r's ends are late by `jitter(r, step)`; steps before
// `first_traced` have no collectives (a sampled recording's untraced stretch).
Node node(std::vector<int64_t> pids, int64_t clock_offset, int steps, int first_traced = 0,
          const char* name = "gloo:all_reduce", Source source = Source::kWork) {
  Node n;
  for (int64_t pid : pids) {
    for (int s = 0; s < steps; ++s) {
      const int64_t t0 = s * 20 * kMs + clock_offset;
      n.steps[pid].emplace_back(t0, s);
      if (s < first_traced) continue;
      const int64_t jitter = ((pid * 7919 + s * 104729) % 41) * 1000;  // 0-40 us, no pattern by rank
      for (int64_t end : {8 * kMs, 15 * kMs})
        n.events.push_back({pid, source, std::string("range:") + name, t0 + end - 2 * kMs, t0 + end + jitter});
    }
  }
  return n;
}

FileCollectives keyed(const Node& n) { return key_collectives(n.events, n.steps); }

TEST(Align, RecoversTheOffsetBetweenTwoNodes) {
  const int64_t offset = 3'217'000'000;  // node 1's clock is 3.217 s ahead
  const auto al = align(keyed(node({100, 101}, 0, 30)), keyed(node({200, 201}, offset, 30)));
  ASSERT_TRUE(al);
  EXPECT_NEAR(static_cast<double>(al->offset_ns), -static_cast<double>(offset), 20'000);
  EXPECT_EQ(al->collectives, 60u);
  EXPECT_EQ(al->pairs, 240u);
  EXPECT_EQ(al->source, Source::kWork);
  EXPECT_TRUE(al->by_step);
  EXPECT_GT(al->residual_ns, 0);
  EXPECT_LE(al->residual_ns, 40'000);
  EXPECT_LE(al->max_deviation_ns, 41'000);
}

// Without steps the k-th collective of each rank is matched; a node whose first
// steps went untraced would then be matched one or more steps off. Keys within
// steps match the same collective.
TEST(Align, MatchesWithinStepsWhenOneNodeMissedTheFirstSteps) {
  const int64_t offset = -50 * kMs;
  const auto ref = keyed(node({1, 2}, 0, 20));
  const auto other = keyed(node({3, 4}, offset, 20, /*first_traced=*/3));
  const auto al = align(ref, other);
  ASSERT_TRUE(al);
  EXPECT_TRUE(al->by_step);
  EXPECT_NEAR(static_cast<double>(al->offset_ns), static_cast<double>(-offset), 20'000);
  EXPECT_EQ(al->collectives, 34u);

  // The same files without step tables are matched by order: 3 steps off,
  // which the residual cannot show (every step looks alike), so keys by step come first.
  Node a = node({1, 2}, 0, 20), b = node({3, 4}, offset, 20, 3);
  a.steps.clear();
  b.steps.clear();
  const auto by_order = align(keyed(a), keyed(b));
  ASSERT_TRUE(by_order);
  EXPECT_FALSE(by_order->by_step);
  EXPECT_NEAR(static_cast<double>(by_order->offset_ns), static_cast<double>(-offset - 3 * 20 * kMs), 20'000);
}

TEST(Align, PrefersNcclKernelsToCpuOps) {
  Node a = node({1}, 0, 10, 0, "c10d::allreduce_", Source::kC10dOp);
  Node b = node({2}, 7 * kMs, 10, 0, "c10d::allreduce_", Source::kC10dOp);
  // The kernels say 5 ms; the CPU ops (ending when queued) say 7 ms.
  const Node ka = node({1}, 0, 10, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", Source::kNcclKernel);
  const Node kb = node({2}, 5 * kMs, 10, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", Source::kNcclKernel);
  a.events.insert(a.events.end(), ka.events.begin(), ka.events.end());
  b.events.insert(b.events.end(), kb.events.begin(), kb.events.end());
  const auto al = align(keyed(a), keyed(b));
  ASSERT_TRUE(al);
  EXPECT_EQ(al->source, Source::kNcclKernel);
  EXPECT_NEAR(static_cast<double>(al->offset_ns), -5.0 * kMs, 50'000);
}

TEST(Align, NothingSharedIsNoAlignment) {
  EXPECT_FALSE(align(keyed(node({1}, 0, 5, 0, "gloo:all_reduce")), keyed(node({2}, 0, 5, 0, "gloo:broadcast"))));
  EXPECT_FALSE(align(keyed(node({1}, 0, 5)), keyed(Node{})));
  EXPECT_EQ(keyed(Node{}).events, 0u);
}

// A node whose GPU runs behind its CPU: rank `lagging`'s all-reduce kernel of
// step s starts after the CPU began step s+1. The kernel is placed in the step
// whose CPU launched it, so the same collective is matched on every rank.
std::string nccl_node(const std::string& name, std::vector<int64_t> pids, int64_t clock_offset, int64_t lagging) {
  const std::string path = gpuscope::testing::fresh_temp_db(name);
  test_support::RecordingBuilder b(path);
  for (int64_t pid : pids) {
    b.process({.pid = pid, .rank = pid % 10}, /*main_thread=*/"");
    for (int s = 0; s < 10; ++s) {
      const int64_t t0 = s * 20 * kMs + clock_offset, launch = t0 + 15 * kMs;
      b.step(s, t0, t0 + 20 * kMs);
      b.api({.name = "cudaLaunchKernel", .start = launch, .end = launch + 5000, .correlation = 100 + s});
      // Every rank leaves the all-reduce together.
      b.kernel({.correlation = 100 + s, .start = t0 + (pid == lagging ? 23 : 16) * kMs, .end = t0 + 25 * kMs,
                .name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"});
    }
  }
  return path;
}

TEST(Align, NcclKernelsArePlacedInTheStepThatLaunchedThem) {
  const std::string a = nccl_node("align_nccl_a", {10, 11}, 0, /*lagging=*/11);
  const std::string b = nccl_node("align_nccl_b", {22, 23}, 2'000'000'000, /*lagging=*/-1);
  {
    store::Reader ra(a), rb(b);
    const auto al = align(read_collectives(ra), read_collectives(rb));
    ASSERT_TRUE(al);
    EXPECT_EQ(al->source, Source::kNcclKernel);
    EXPECT_TRUE(al->by_step);
    EXPECT_EQ(al->collectives, 10u);
    EXPECT_EQ(al->offset_ns, -2'000'000'000);
    EXPECT_EQ(al->max_deviation_ns, 0);
  }
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST(Align, NamesOfCollectives) {
  EXPECT_EQ(cpu_source("gloo:all_reduce"), Source::kWork);
  EXPECT_EQ(cpu_source("nccl:all_reduce"), Source::kWork);
  EXPECT_EQ(cpu_source("c10d::allreduce_"), Source::kC10dOp);
  EXPECT_FALSE(cpu_source("aten::add"));
  EXPECT_EQ(kernel_source("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), Source::kNcclKernel);
  EXPECT_EQ(kernel_source("ncclKernel_AllReduce_RING_LL_Sum_float"), Source::kNcclKernel);
  EXPECT_FALSE(kernel_source("volta_sgemm_128x64_nn"));
}

}  // namespace
}  // namespace gpuscope::merge
