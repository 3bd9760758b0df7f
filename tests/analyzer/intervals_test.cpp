#include <gtest/gtest.h>

#include <random>

#include "analyzer/intervals.h"

namespace gpuscope::analyzer {
namespace {

// Brute force on a small integer grid: which unit cells are covered.
std::vector<bool> cells(const std::vector<Interval>& v, int n) {
  std::vector<bool> c(static_cast<size_t>(n), false);
  for (const auto& iv : v)
    for (int64_t t = std::max<int64_t>(iv.start, 0); t < std::min<int64_t>(iv.end, n); ++t) c[static_cast<size_t>(t)] = true;
  return c;
}

std::vector<Interval> random_intervals(std::mt19937& rng, int count, int n) {
  std::uniform_int_distribution<int> pos(0, n - 1), len(0, 12);
  std::vector<Interval> v;
  for (int i = 0; i < count; ++i) {
    int s = pos(rng);
    v.push_back({s, s + len(rng)});
  }
  return v;
}

TEST(IntervalSet, MergesOverlapsAndDropsEmpty) {
  auto s = IntervalSet::from({{5, 10}, {0, 3}, {8, 12}, {3, 4}, {20, 20}, {15, 14}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.items()[0].start, 0);
  EXPECT_EQ(s.items()[0].end, 4);  // touching intervals merge
  EXPECT_EQ(s.items()[1].start, 5);
  EXPECT_EQ(s.items()[1].end, 12);
  EXPECT_EQ(s.total(), 11);
}

TEST(IntervalSet, CoveredHandlesPartialEdges) {
  auto s = IntervalSet::from({{10, 20}, {30, 40}});
  EXPECT_EQ(s.covered(0, 100), 20);
  EXPECT_EQ(s.covered(15, 35), 10);
  EXPECT_EQ(s.covered(20, 30), 0);
  EXPECT_EQ(s.covered(12, 18), 6);
  EXPECT_EQ(s.covered(40, 50), 0);
  EXPECT_EQ(s.covered(50, 40), 0);
  EXPECT_TRUE(s.contains(10));
  EXPECT_FALSE(s.contains(20));
  EXPECT_FALSE(s.contains(25));
}

TEST(IntervalSet, AlgebraMatchesBruteForce) {
  std::mt19937 rng(7);
  constexpr int n = 200;
  for (int round = 0; round < 200; ++round) {
    auto ra = random_intervals(rng, 15, n), rb = random_intervals(rng, 15, n);
    auto a = IntervalSet::from(ra), b = IntervalSet::from(rb);
    auto ca = cells(ra, n), cb = cells(rb, n);
    auto check = [&](const IntervalSet& s, auto op, const char* what) {
      auto cs = cells(s.items(), n);
      for (int t = 0; t < n; ++t) ASSERT_EQ(cs[t], op(ca[t], cb[t])) << what << " round " << round << " t " << t;
      for (size_t i = 1; i < s.items().size(); ++i) ASSERT_LT(s.items()[i - 1].end, s.items()[i].start);
    };
    check(a.unite(b), [](bool x, bool y) { return x || y; }, "unite");
    check(a.subtract(b), [](bool x, bool y) { return x && !y; }, "subtract");
    check(a.intersect(b), [](bool x, bool y) { return x && y; }, "intersect");
    std::uniform_int_distribution<int> pos(0, n);
    for (int q = 0; q < 20; ++q) {
      int lo = pos(rng), hi = pos(rng);
      int64_t want = 0;
      for (int t = lo; t < hi; ++t) want += ca[static_cast<size_t>(t)];
      ASSERT_EQ(a.covered(lo, hi), want) << lo << ".." << hi;
      auto clipped = a.clip(lo, hi);
      ASSERT_EQ(clipped.total(), want);
    }
  }
}

}  // namespace
}  // namespace gpuscope::analyzer
