// What `gpuscope info` reads from a recording (store/summary.cpp), on
// synthetic recordings: an empty one, and one with every part `info` shows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace_formats/schema/enums.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/summary.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

int64_t rows_of(const store::RecordingSummary& s, const std::string& table) {
  for (const auto& r : s.rows)
    if (r.table == table) return r.count;
  ADD_FAILURE() << "no row count for " << table;
  return -1;
}

TEST(Summary, EmptyRecordingHasNoSpanDevicesOrProcesses) {
  const std::string path = testing::fresh_temp_db("summary_empty");
  { test_support::RecordingBuilder b(path); }
  store::Reader r(path);
  const store::RecordingSummary s = store::summarize(r);
  EXPECT_EQ(s.schema_version, schema::kVersion);
  EXPECT_EQ(s.gpuscope_version, "?");
  EXPECT_EQ(s.source, "gpuscope record");
  EXPECT_FALSE(s.span);
  EXPECT_FALSE(s.traced);
  EXPECT_TRUE(s.devices.empty());
  EXPECT_TRUE(s.processes.empty());
  EXPECT_EQ(s.dropped, 0);
  EXPECT_TRUE(s.messages.empty());
  // Every table but meta and enum, in the schema's order.
  std::vector<std::string> want, got;
  for (const auto& t : schema::tables())
    if (t.name != "meta" && t.name != "enum") want.emplace_back(t.name);
  for (const auto& row : s.rows) got.push_back(row.table);
  EXPECT_EQ(got, want);
}

TEST(Summary, SampledRecordingOfTwoRanks) {
  const std::string path = testing::fresh_temp_db("summary_full");
  {
    test_support::RecordingBuilder b(path);
    b.meta("gpuscope_version", "9.8.7").meta("source", "torch.profiler").meta("sample", "2,8");
    b.device({.id = 1, .name = "H200", .sm_count = 132, .total_memory = 150'000'000'000, .compute_major = 9});
    b.device({.id = 0, .name = "A100", .sm_count = 108, .total_memory = 80'000'000'000, .compute_major = 8});
    store::ProcessRow rank1 = test_support::python_process(20, "node-b");
    rank1.rank = 1;
    rank1.world_size = 2;
    store::ProcessRow rank0 = test_support::python_process(10, "node-a");
    rank0.rank = 0;  // world size not recorded
    b.process(rank1).process(rank0);
    b.at(10, 10);
    b.kernel({.start = 500, .end = 900, .name = "k"});
    b.api({.name = "cudaLaunchKernel", .start = 300, .end = 320});
    b.op({.name = "aten::mm", .start = 200, .end = 2'000});
    b.range({.source = schema::range_source::sampling_window, .name = "traced", .start = 100, .end = 1'100});
    b.range({.source = schema::range_source::sampling_window, .name = "traced", .start = 5'000, .end = 5'500});
    b.range({.name = "nvtx", .start = 150, .end = 6'000});  // not a traced stretch, but in the span
    b.writer().put_stat(10, "dropped_ring", 3);
    b.writer().put_stat(20, "dropped_buffers", 4);
    b.writer().put_stat(10, "cupti_finalizes", 2);
    b.writer().put_stat(20, "cupti_teardown_failures", 1);
    b.writer().put_stat(10, "ring_bytes", 1'000);  // not a drop
    b.writer().add(store::MessageRow{.pid = 20, .ts = 7, .text = "second"});
    b.writer().add(store::MessageRow{.pid = 10, .ts = 3, .text = "first"});
  }
  store::Reader r(path);
  const store::RecordingSummary s = store::summarize(r);
  EXPECT_EQ(s.gpuscope_version, "9.8.7");
  EXPECT_EQ(s.source, "torch.profiler");
  ASSERT_TRUE(s.span);
  EXPECT_EQ(s.span->start, 100);
  EXPECT_EQ(s.span->end, 6'000);
  ASSERT_TRUE(s.traced);
  EXPECT_EQ(s.traced->stretches, 2);
  EXPECT_EQ(s.traced->ns, 1'500);
  EXPECT_EQ(s.traced->sample, "2,8");
  EXPECT_EQ(s.traced->cupti_teardowns, 2);
  EXPECT_EQ(s.traced->cupti_teardowns_failed, 1);

  ASSERT_EQ(s.devices.size(), 2u);  // by id
  EXPECT_EQ(s.devices[0].name, "A100");
  EXPECT_EQ(s.devices[1].name, "H200");
  EXPECT_EQ(s.devices[1].sm_count, 132);
  EXPECT_EQ(s.devices[1].total_memory, 150'000'000'000);
  EXPECT_EQ(s.devices[1].compute_major, 9);

  ASSERT_EQ(s.processes.size(), 2u);  // by pid
  EXPECT_EQ(s.processes[0].pid, 10);
  EXPECT_EQ(s.processes[0].host, "node-a");
  EXPECT_EQ(s.processes[0].rank, 0);
  EXPECT_FALSE(s.processes[0].world_size);
  EXPECT_EQ(s.processes[0].cupti_status, "ok");
  EXPECT_EQ(s.processes[0].cmdline, "python3 train.py");
  EXPECT_EQ(s.processes[1].rank, 1);
  EXPECT_EQ(s.processes[1].world_size, 2);

  EXPECT_EQ(rows_of(s, "kernel"), 1);
  EXPECT_EQ(rows_of(s, "range"), 3);
  EXPECT_EQ(rows_of(s, "process"), 2);
  EXPECT_EQ(s.dropped, 7);
  ASSERT_EQ(s.messages.size(), 2u);  // by time
  EXPECT_EQ(s.messages[0].pid, 10);
  EXPECT_EQ(s.messages[0].text, "first");
  EXPECT_EQ(s.messages[1].text, "second");
}

TEST(Summary, ProcessWithoutRankHasNone) {
  const std::string path = testing::fresh_temp_db("summary_norank");
  {
    test_support::RecordingBuilder b(path);
    b.process(test_support::python_process(10));
  }
  store::Reader r(path);
  const store::RecordingSummary s = store::summarize(r);
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_FALSE(s.processes[0].rank);
  EXPECT_FALSE(s.span);
}

}  // namespace
}  // namespace gpuscope
