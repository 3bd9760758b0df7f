// Exact numbers on hand-made timelines: the priority breakdown and the idle
// attribution, including the split of a gap after a host synchronization.
#include <gtest/gtest.h>

#include "tests/analyzer/sim.h"
#include "tests/analyzer/test_util.h"

namespace gpuscope::testing {
namespace {

using analyzer::IdleCause;

// Rows of pid 1, thread 1, placed by hand; no process row.
struct Raw {
  explicit Raw(const std::string& path) : b(path) { b.at(1, 1); }
  void kernel(int64_t s, int64_t e, std::string_view name = names::kGemmBf16, int64_t corr = 0) {
    b.kernel({.stream = 7, .correlation = corr, .start = s, .end = e, .name = name});
  }
  void api(int64_t s, int64_t e, std::string_view name, int64_t corr = 0) {
    b.api({.name = name, .start = s, .end = e, .correlation = corr});
  }
  void step(int64_t n, int64_t s, int64_t e) { b.step(n, s, e); }
  test_support::RecordingBuilder b;
};

int64_t idle(const analyzer::Analysis& a, IdleCause c) {
  return a.idle.causes[static_cast<size_t>(c)].total_ns;
}

TEST(Breakdown, EachMomentCountedOnceByPriority) {
  const std::string path = temp_db("breakdown");
  {
    Raw r(path);
    r.step(0, 0, us(1000));
    r.kernel(us(100), us(300));
    r.b.memcpy({.start = us(250), .end = us(400), .copy_kind = schema::copy_kind::HtoD,
                .src_kind = schema::mem_kind::pinned, .dst_kind = schema::mem_kind::device});
    r.b.memset({.start = us(350), .end = us(450)});
    r.kernel(us(500), us(600), names::kNccl);
    r.api(us(600), us(650), "cudaLaunchKernel");
    r.b.dataloader(us(640), us(760));
    r.b.op({.name = "aten::index", .start = us(700), .end = us(900)});
  }
  auto a = analyze_path(path);
  ASSERT_EQ(a.steps.size(), 1u);
  const auto& b = a.breakdown;
  EXPECT_EQ(b.kernel, us(200));
  EXPECT_EQ(b.memcpy, us(100));
  EXPECT_EQ(b.memset, us(50));
  EXPECT_EQ(b.communication, us(100));
  EXPECT_EQ(b.runtime, us(50));
  EXPECT_EQ(b.dataloader, us(110));
  EXPECT_EQ(b.cpu_exec, us(140));
  EXPECT_EQ(b.idle, us(250));
  EXPECT_EQ(b.total(), us(1000));
  EXPECT_EQ(a.steps[0].gpu_busy_ns, us(450));
  EXPECT_NEAR(a.summary.gpu_utilization, 0.45, 1e-9);
  // GPU idle: [0,100) [450,500) [600,1000); the sum of causes is all of it.
  EXPECT_EQ(a.idle.idle_ns, us(550));
  int64_t sum = 0;
  for (const auto& c : a.idle.causes) sum += c.total_ns;
  EXPECT_EQ(sum, us(550));
}

// After a wait the GPU's queue is empty: until the CPU has launched the next
// kernel, however long the wait itself was, the gap is the sync's cost.
TEST(IdleAttribution, WholeGapAfterSyncIsTheSyncs) {
  const std::string path = temp_db("sync_split");
  {
    Raw r(path);
    r.step(0, 0, us(3000));
    r.kernel(0, us(1000));
    // Waited 104 us (898 to 1002) for the GPU, then the CPU launched the next kernel at 1480.
    r.api(us(898), us(1000) + 2000, "cudaStreamSynchronize", 5);
    r.api(us(1480), us(1490), "cudaLaunchKernel", 6);
    r.kernel(us(1500), us(2000));
    // A long wait: the whole next gap is the sync's.
    r.api(us(1100), us(2000) + 2000, "cudaStreamSynchronize", 7);
    r.api(us(2190), us(2195), "cudaLaunchKernel", 8);
    r.kernel(us(2200), us(3000));
  }
  auto a = analyze_path(path);
  EXPECT_EQ(idle(a, IdleCause::kHostSync), us(500) + us(200));
  EXPECT_EQ(idle(a, IdleCause::kOther), 0);
  EXPECT_EQ(a.idle.idle_ns, us(700));
}

TEST(IdleAttribution, LaunchOverheadAndDataLoader) {
  const std::string path = temp_db("launch_gaps");
  {
    Raw r(path);
    r.step(0, 0, us(1000));
    int64_t corr = 1;
    for (int i = 0; i < 10; ++i) {  // 10 us kernels, one launch every 30 us
      const int64_t t = us(30 * i);
      r.api(t, t + us(5), "cudaLaunchKernel", corr);
      r.kernel(t + us(8), t + us(18), names::kTiny, corr++);
    }
    r.b.dataloader(us(300), us(900));
    r.api(us(950), us(955), "cudaLaunchKernel", corr);
    r.kernel(us(960), us(1000), names::kTiny, corr);
  }
  auto a = analyze_path(path);
  // The 8 us before the first kernel and 9 x 20 us between the ten, each with one launch.
  EXPECT_EQ(idle(a, IdleCause::kLaunch), us(8 + 9 * 20));
  // [288, 960): mostly the DataLoader wait.
  EXPECT_EQ(idle(a, IdleCause::kDataLoader), us(960 - 288));
  EXPECT_EQ(a.idle.idle_ns, us(1000) - us(10 * 10 + 40));
}

// A long stretch of CPU work (model set-up, a slow Dataset) that holds one
// short cudaFree is not the allocator's: the wait explains its own length and
// the CPU time around it, no more (kWaitGapSlackNs). A gap of back-to-back
// round trips still is.
TEST(IdleAttribution, ShortWaitInsideALongGapDoesNotNameIt) {
  const std::string path = temp_db("short_wait_long_gap");
  {
    Raw r(path);
    r.step(0, 0, ms(20));
    r.kernel(0, us(100));
    // 19.8 ms of CPU work outside any op, with a 50 us cudaFree in it.
    r.api(ms(5), ms(5) + us(50), "cudaFree", 2);
    r.api(ms(19.9), ms(19.9) + us(5), "cudaLaunchKernel", 3);
    r.kernel(ms(19.95), ms(20), names::kGemmBf16, 3);
    // Step 1: a 300 us gap that a 200 us synchronize inside it explains.
    r.step(1, ms(20), ms(21));
    r.kernel(ms(20), ms(20.3));
    r.api(ms(20.35), ms(20.55), "cudaDeviceSynchronize", 4);
    r.api(ms(20.58), ms(20.59), "cudaLaunchKernel", 5);
    r.kernel(ms(20.6), ms(21), names::kGemmBf16, 5);
  }
  auto a = analyze_path(path);
  EXPECT_EQ(idle(a, IdleCause::kAllocator), 0);
  EXPECT_EQ(idle(a, IdleCause::kHostSync), us(300));
  EXPECT_EQ(a.idle.idle_ns, ms(19.85) + us(300));
}

}  // namespace
}  // namespace gpuscope::testing
