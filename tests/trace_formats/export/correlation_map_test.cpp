// CorrelationMap against std::map: dense runs per process, ids far apart,
// below the first one seen, negative and at the int64 extremes all find
// what was stored and nothing else.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "trace_formats/export/correlation_map.h"

namespace gpuscope::formats {
namespace {

TEST(CorrelationMap, AgreesWithAReferenceMap) {
  std::mt19937_64 rng(7);
  CorrelationMap m;
  std::map<std::pair<int64_t, int64_t>, int64_t> ref;
  const int64_t pids[] = {4100, 4200, 0, -5, INT64_MAX};
  auto put = [&](int64_t pid, int64_t corr) {
    int64_t ext = static_cast<int64_t>(rng() % 1000000);
    CorrelationMap::Entry& e = m.upsert(pid, corr);
    e.has_external = true;
    e.external_id = ext;
    ref[{pid, corr}] = ext;
  };
  // Dense runs starting high (profiling began late), as rows meet them.
  for (int64_t pid : pids)
    for (int64_t c = 5'000'000; c < 5'020'000; ++c)
      if (rng() % 3) put(pid, c);
  // Outliers: far above, below the base, negative, extremes.
  const int64_t outliers[] = {1, 0, -1, 4'990'000, 900'000'000, INT64_MIN, INT64_MAX};
  for (int64_t c : outliers)
    for (int64_t pid : pids) put(pid, c);
  for (int i = 0; i < 20000; ++i) put(pids[rng() % 5], static_cast<int64_t>(rng()));
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [key, ext] : ref) {
    const CorrelationMap::Entry* e = m.find(key.first, key.second);
    ASSERT_NE(e, nullptr) << key.first << " " << key.second;
    EXPECT_EQ(e->external_id, ext);
  }
  // Pairs never stored: neighbours of stored ones, and an unknown process.
  int absent = 0;
  for (int i = 0; i < 20000; ++i) {
    int64_t pid = pids[rng() % 5];
    int64_t c = 4'999'000 + static_cast<int64_t>(rng() % 30000);
    if (ref.count({pid, c})) continue;
    ++absent;
    EXPECT_EQ(m.find(pid, c), nullptr) << pid << " " << c;
  }
  EXPECT_GT(absent, 1000);
  EXPECT_EQ(m.find(1234, 5'000'001), nullptr);
  // Dense storage stays within a few entries per stored pair.
  EXPECT_LT(m.bytes(), ref.size() * 4 * sizeof(CorrelationMap::Entry) + (size_t{1} << 21));
}

// An id too far ahead for the array goes to the hash table; when the array
// later grows over it (the ids between arrive), it is still found, once.
TEST(CorrelationMap, PairsStoredBeforeTheArrayGrewOverThemAreKept) {
  CorrelationMap m;
  m.upsert(7, 100).external_id = 1;
  CorrelationMap::Entry& far = m.upsert(7, 200'000);
  far.has_external = true;
  far.external_id = 42;
  for (int64_t c = 101; c < 200'000; ++c) m.upsert(7, c);
  const CorrelationMap::Entry* e = m.find(7, 200'000);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->has_external);
  EXPECT_EQ(e->external_id, 42);
  size_t before = m.size();
  EXPECT_EQ(m.upsert(7, 200'000).external_id, 42);
  EXPECT_EQ(m.size(), before);
  EXPECT_EQ(m.size(), 200'000u - 100u + 1u);
}

}  // namespace
}  // namespace gpuscope::formats
