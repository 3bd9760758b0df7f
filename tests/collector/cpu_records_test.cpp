// The application-thread side: ring buffers (wrap-around, drops) and the
// writer's pairing of NVTX push/pop and start/end into ranges.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "collector/cpu_decode.h"
#include "collector/emit.h"
#include "collector/ring.h"
#include "collector/thread_slots.h"
#include "trace_formats/store/reader.h"

namespace gpuscope {
namespace {

using namespace collector;

TEST(Ring, WrapsAroundAndKeepsOrder) {
  std::vector<uint8_t> mem(256);
  Ring ring;
  ring.init(mem.data(), mem.size());
  uint64_t next_expected = 0, written = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3; ++i) {
      uint8_t* p = ring.reserve(48);
      ASSERT_NE(p, nullptr);
      auto* h = reinterpret_cast<RecordHeader*>(p);
      h->type = RecordType::kNvtxMark;
      h->size = 48;
      uint64_t v = written++;
      std::memcpy(p + 8, &v, 8);
      ring.commit();
    }
    ring.drain([&](const RecordHeader& h) {
      uint64_t v;
      std::memcpy(&v, reinterpret_cast<const uint8_t*>(&h) + 8, 8);
      EXPECT_EQ(v, next_expected++);
    });
  }
  EXPECT_EQ(next_expected, written);
}

TEST(Ring, FullRingRefusesInsteadOfOverwriting) {
  std::vector<uint8_t> mem(128);
  Ring ring;
  ring.init(mem.data(), mem.size());
  int accepted = 0;
  for (int i = 0; i < 10; ++i) {
    uint8_t* p = ring.reserve(32);
    if (!p) continue;
    reinterpret_cast<RecordHeader*>(p)->type = RecordType::kNvtxMark;
    reinterpret_cast<RecordHeader*>(p)->size = 32;
    ring.commit();
    ++accepted;
  }
  EXPECT_EQ(accepted, 4);
  int drained = 0;
  ring.drain([&](const RecordHeader&) { ++drained; });
  EXPECT_EQ(drained, 4);
  EXPECT_NE(ring.reserve(32), nullptr);
}

class CpuDecodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / ("cpu_decode_" + std::to_string(getpid()) + ".db");
    std::filesystem::remove(path_);
    writer_ = std::make_unique<store::Writer>(path_.string());
    sink_ = std::make_unique<RowSink>(*writer_);
    sink_->pid = 7;
    g_enabled.store(true);
  }
  void TearDown() override {
    g_enabled.store(false);
    sink_.reset();
    writer_.reset();
    std::filesystem::remove(path_);
  }
  // Drains the calling thread's ring through a fresh decoder.
  void drain(bool final_flush) {
    ThreadSlot* slot = current_slot();
    ASSERT_NE(slot, nullptr);
    thread_.tid = slot->tid;
    writer_->begin();
    slot->ring.drain([&](const RecordHeader& h) { decoder_.handle(h, thread_, *sink_); });
    if (final_flush) {
      decoder_.flush_open(thread_, *sink_);
      decoder_.flush_open_start_end(*sink_);
    }
    writer_->commit();
  }
  int64_t q(const std::string& sql) { return writer_->connection().query_int(sql).value_or(-1); }

  std::filesystem::path path_;
  std::unique_ptr<store::Writer> writer_;
  std::unique_ptr<RowSink> sink_;
  CpuDecoder decoder_;
  CpuDecoder::Thread thread_;
};

TEST_F(CpuDecodeTest, PushPopNestsWithDepthAndDomains) {
  emit_nvtx_domain(5, "my.domain");
  emit_nvtx_range(RecordType::kNvtxPush, 100, 0, 0, "outer", true, 0xff00ff00, 0);
  emit_nvtx_range(RecordType::kNvtxPush, 110, 0, 0, "inner", false, 0, 3);
  emit_nvtx_end(RecordType::kNvtxPop, 120, 0, 0);
  emit_nvtx_range(RecordType::kNvtxPush, 130, 5, 0, "in_domain", false, 0, 0);
  emit_nvtx_end(RecordType::kNvtxPop, 140, 5, 0);
  emit_nvtx_end(RecordType::kNvtxPop, 150, 0, 0);
  emit_nvtx_end(RecordType::kNvtxPop, 160, 0, 0);  // unmatched
  emit_nvtx_range(RecordType::kNvtxMark, 170, 0, 0, "mark", false, 0, 0);
  drain(false);
  EXPECT_EQ(q("SELECT start*1000 + \"end\" FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='outer'"), 100150);
  EXPECT_EQ(q("SELECT depth FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='inner'"), 1);
  EXPECT_EQ(q("SELECT category FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='inner'"), 3);
  EXPECT_EQ(q("SELECT color FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='outer'"), 0xff00ff00);
  EXPECT_EQ(q("SELECT count(*) FROM range r JOIN string d ON d.id=r.domain_id WHERE d.value='my.domain'"), 1);
  EXPECT_EQ(q("SELECT depth FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='in_domain'"), 0);
  EXPECT_EQ(q("SELECT kind FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='mark'"), 3);
  EXPECT_EQ(sink_->totals()["nvtx_unmatched_pop"], 1);
}

TEST_F(CpuDecodeTest, StartEndAcrossThreadsAndOpenRangesAtShutdown) {
  emit_nvtx_range(RecordType::kNvtxStart, 10, 0, 42, "async", false, 0, 0);
  std::thread([] { }).join();
  emit_nvtx_end(RecordType::kNvtxEnd, 90, 0, 42);
  emit_nvtx_range(RecordType::kNvtxPush, 95, 0, 0, "never_popped", false, 0, 0);
  emit_nvtx_range(RecordType::kNvtxStart, 96, 0, 43, "never_ended", false, 0, 0);
  drain(true);
  EXPECT_EQ(q("SELECT \"end\" - start FROM range r JOIN string s ON s.id=r.name_id WHERE s.value='async'"), 80);
  EXPECT_EQ(q("SELECT count(*) FROM range WHERE \"end\" IS NULL"), 2);
}

TEST_F(CpuDecodeTest, TorchRecordsBecomeRows) {
  OpRecord op{};
  op.start = 1000;
  op.end = 2000;
  op.seq_nr = 17;
  op.external_id = 5;
  op.depth = 1;
  op.backward = 1;
  emit_op(op, "aten::addmm", "[[32,128],[128,64]]", "[\"float\",\"float\"]");
  emit_range(0, 500, 3, 0, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  emit_step(0, 2500, 0, 2);
  MemoryRecord m{};
  m.ts = 1500;
  m.bytes = 4096;
  m.op = 1;
  m.source = 2;
  m.total_allocated = 4096;
  m.total_reserved = 2 << 20;
  emit_memory(m);
  emit_counter(1600, 0, "gpu_memory_used", 123.5);
  emit_message(1700, 2, "hello");
  emit_meta("torch_version", "2.11.0");
  emit_external_correlation(99, 5);
  drain(false);
  EXPECT_EQ(q("SELECT seq_nr*100 + backward*10 + depth FROM op"), 1711);
  EXPECT_EQ(q("SELECT count(*) FROM op o JOIN string s ON s.id=o.shapes_id WHERE s.value='[[32,128],[128,64]]'"), 1);
  EXPECT_EQ(q("SELECT source FROM range"), 3);
  EXPECT_EQ(q("SELECT \"end\" FROM step"), 2500);
  EXPECT_EQ(q("SELECT total_reserved FROM memory_event WHERE source=2"), 2 << 20);
  EXPECT_EQ(q("SELECT CAST(value*2 AS INTEGER) FROM counter"), 247);
  EXPECT_EQ(q("SELECT count(*) FROM message WHERE text='hello'"), 1);
  EXPECT_EQ(writer_->connection().query_text("SELECT value FROM meta WHERE key='torch_version'").value_or(""), "2.11.0");
  EXPECT_EQ(q("SELECT external_id FROM external_correlation WHERE correlation=99"), 5);
}

TEST_F(CpuDecodeTest, NothingIsRecordedWhileDisabled) {
  g_enabled.store(false);
  emit_nvtx_range(RecordType::kNvtxMark, 1, 0, 0, "ignored", false, 0, 0);
  g_enabled.store(true);
  drain(false);
  EXPECT_EQ(q("SELECT count(*) FROM range"), 0);
}

TEST_F(CpuDecodeTest, LongTextIsClipped) {
  std::string long_name(10000, 'x');
  emit_nvtx_range(RecordType::kNvtxMark, 1, 0, 0, long_name, false, 0, 0);
  drain(false);
  EXPECT_EQ(q("SELECT length(s.value) FROM range r JOIN string s ON s.id=r.name_id"), kMaxTextBytes);
}

}  // namespace
}  // namespace gpuscope
