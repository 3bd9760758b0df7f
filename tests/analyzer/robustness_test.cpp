// Random rows in every table: the analysis and every report must not crash,
// whatever the values (negative or huge times, dangling ids, overlapping steps).
// Written with the raw store::Writer, not tests/support's builder, whose
// defaults (a pid or tid of 0 becomes the current one) would tame the values.
#include <gtest/gtest.h>

#include <random>

#include "analyzer/model.h"
#include "trace_formats/common/error.h"
#include "trace_formats/store/writer.h"
#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

int64_t pick(std::mt19937_64& rng, std::initializer_list<int64_t> special) {
  std::uniform_int_distribution<int> coin(0, 3);
  if (coin(rng) == 0) {
    std::uniform_int_distribution<size_t> i(0, special.size() - 1);
    return *(special.begin() + static_cast<long>(i(rng)));
  }
  std::uniform_int_distribution<int64_t> v(0, 2'000'000);
  return v(rng);
}

void write_random(const std::string& path, uint64_t seed) {
  std::remove(path.c_str());
  std::mt19937_64 rng(seed);
  auto t = [&] { return pick(rng, {0, -5, INT64_MAX / 4, 1, 1'000'000'000'000}); };
  auto small = [&] { return pick(rng, {0, 1, 2, 3, -1, 7, 65535, 1LL << 40}) % 11; };
  const char* pool[] = {names::kGemmBf16, names::kSgemm, names::kAdd, names::kSoftmax, names::kNchwToNhwc, names::kNccl,
                         "cudaLaunchKernel", "cudaStreamSynchronize", "cudaFree", "cudaMalloc", "aten::mm",
                         "enumerate(DataLoader)#x", "train_step", "_compile.compile_inner (dynamo_timed)", "\xff\xfe<&>"};
  auto name = [&] { return std::string_view(pool[std::uniform_int_distribution<size_t>(0, std::size(pool) - 1)(rng)]); };
  store::Writer w(path);
  w.begin();
  store::ProcessRow p;
  p.pid = 1 + static_cast<int64_t>(seed % 2);
  p.cupti_status = "ok";
  w.put(p);
  if (seed % 3) w.put(store::DeviceRow{0, "dev", "u", 132, 80'000'000'000, 9, 0, 0, 0});
  for (int i = 0; i < 300; ++i) {
    const int64_t s = t(), e = t(), corr = small() + i % 50;
    store::KernelRow k;
    k.pid = 1;
    k.device = small() % 3;
    k.stream = small();
    k.correlation = corr;
    k.start = s;
    k.end = e;
    k.name = name();
    k.grid_x = pick(rng, {0, -1, 1LL << 40});
    w.add(k);
    store::ApiCallRow a;
    a.pid = 1;
    a.tid = small();
    a.name = name();
    a.start = t();
    a.end = t();
    a.correlation = corr;
    a.return_code = small() % 2;
    w.add(a);
    store::MemcpyRow m;
    m.pid = 1;
    m.device = small() % 2;
    m.start = t();
    m.end = t();
    m.copy_kind = small();
    m.src_kind = small();
    m.dst_kind = small();
    m.bytes = pick(rng, {0, 4, -1, 1LL << 50});
    m.correlation = corr;
    w.add(m);
    store::OpRow o;
    o.pid = 1;
    o.tid = small();
    o.name = name();
    o.start = t();
    o.end = t();
    o.external_id = pick(rng, {-1, 0, 1LL << 60});
    o.shapes = i % 2 ? "[[1,2]]" : "";
    o.dtypes = i % 3 ? "[\"float\"]" : "";
    w.add(o);
    w.put(store::ExternalCorrelationRow{1, corr, o.external_id});
    store::RangeRow r;
    r.pid = 1;
    r.tid = small();
    r.source = small() % 7;
    r.name = name();
    r.start = t();
    r.end = pick(rng, {store::kNull, 0, 3'000'000});
    r.depth = pick(rng, {store::kNull, 0, 1});
    w.add(r);
    if (i % 10 == 0) w.add(store::StepRow{1, small(), t(), t(), small() % 4});
    store::SyncRow y;
    y.pid = 1;
    y.start = t();
    y.end = t();
    y.type = small() % 5;
    y.correlation = corr;
    w.add(y);
    store::MemoryEventRow me;
    me.pid = 1;
    me.device = small() % 2;
    me.ts = t();
    me.op = 1 + small() % 2;
    me.source = 1 + small() % 2;
    me.mem_kind = small() % 5;
    me.bytes = pick(rng, {0, 1LL << 40, -3});
    me.total_allocated = pick(rng, {store::kNull, 5, 1LL << 45});
    me.total_reserved = pick(rng, {store::kNull, 5, 1LL << 45});
    w.add(me);
  }
  w.commit();
}

TEST(Robustness, RandomRecordingsNeverCrash) {
  int analysed = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    const std::string path = temp_db("random" + std::to_string(seed));
    write_random(path, seed);
    for (int variant = 0; variant < 3; ++variant) {
      analyzer::Options o;
      if (variant == 1) o.device = 1;
      if (variant == 2) analyzer::parse_step_range("0-3", o);
      try {
        auto a = analyze_path(path, o);
        EXPECT_FALSE(analyzer::to_text(a).empty());
        EXPECT_FALSE(analyzer::to_json(a).empty());
        EXPECT_FALSE(analyzer::to_markdown(a).empty());
        EXPECT_FALSE(analyzer::to_html(a).empty());
        ++analysed;
      } catch (const Error&) {
        // A clear refusal (no such device, no such steps) is fine.
      }
    }
  }
  EXPECT_GT(analysed, 24);
}

// Correlation 0 is "no link" (CUPTI gave none, or the collector unlinked ids
// that repeated): rows with it must never be joined to each other.
TEST(IdMap, KeyZeroIsNeverFound) {
  for (uint64_t far : {uint64_t{7}, uint64_t{1} << 40}) {  // dense, then sparse
    analyzer::IdMap map;
    const std::vector<std::pair<uint64_t, uint32_t>> rows = {{0, 1}, {far, 2}, {0, 3}};
    map.build_fn(rows.size(), [&](size_t i) { return rows[i]; });
    EXPECT_EQ(map.find(0), analyzer::kNone);
    EXPECT_EQ(map.find(far), 2u);
    analyzer::IdMap built;
    built.build(rows);
    EXPECT_EQ(built.find(0), analyzer::kNone);
    EXPECT_EQ(built.find(far), 2u);
  }
}

}  // namespace
}  // namespace gpuscope::testing
