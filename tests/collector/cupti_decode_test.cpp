// Collector decoding and writing, driven by fake CUPTI buffers built from the
// real record structs of every kind the collector records.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "collector/cupti_decode.h"
#include "trace_formats/store/reader.h"
#include "tests/collector/fake_cupti.h"

namespace gpuscope {
namespace {

using test::FakeBuffer;

constexpr uint64_t kOrigin = 1'000'000'000;

CUpti_ActivityKernel10 kernel(const char* name, uint64_t start, uint64_t end, uint32_t corr) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = corr;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  return k;
}

class DecodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("decode_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    std::filesystem::remove(path_);
    writer_ = std::make_unique<store::Writer>(path_.string());
    sink_ = std::make_unique<collector::RowSink>(*writer_);
    sink_->pid = 4242;
    sink_->origin_ns = kOrigin;
  }
  void TearDown() override {
    sink_.reset();
    writer_.reset();
    std::filesystem::remove(path_);
  }
  size_t decode(FakeBuffer& b) { return decode(b, b.size()); }
  size_t decode(FakeBuffer& b, size_t valid) {
    writer_->begin();
    size_t n = collector::decode_activity_buffer(api_, b.data(), valid, *sink_);
    writer_->commit();
    return n;
  }
  // One CUPTI session's buffer: per id, a cudaLaunchKernel on thread 7 and its kernel.
  void decode_session(uint32_t session, std::vector<uint32_t> ids) {
    FakeBuffer b;
    for (uint32_t id : ids) {
      CUpti_ActivityAPI a{};
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = 1;
      a.threadId = 7;
      a.start = kOrigin + 1;
      a.end = kOrigin + 2;
      a.correlationId = id;
      b.add(a);
      b.add(kernel("k", kOrigin + 3, kOrigin + 4, id));
    }
    sink_->begin_cupti_session(session);
    decode(b);
  }
  int64_t q(const std::string& sql) { return writer_->connection().query_int(sql).value_or(-1); }
  std::string qs(const std::string& sql) { return writer_->connection().query_text(sql).value_or("<null>"); }

  std::filesystem::path path_;
  collector::CuptiApi api_ = test::fake_api();
  std::unique_ptr<store::Writer> writer_;
  std::unique_ptr<collector::RowSink> sink_;
};


TEST_F(DecodeTest, KernelFieldsAndDemangledName) {
  FakeBuffer b;
  b.add(kernel("_Z5scalePfi", kOrigin + 100, kOrigin + 350, 11));
  b.add(kernel("add_kernel", kOrigin + 400, kOrigin + 500, 12));
  EXPECT_EQ(decode(b), 2u);
  EXPECT_EQ(q("SELECT count(*) FROM kernel"), 2);
  EXPECT_EQ(qs("SELECT s.value FROM kernel k JOIN string s ON s.id=k.name_id WHERE correlation=11"), "scale(float*, int)");
  EXPECT_EQ(q("SELECT start FROM kernel WHERE correlation=11"), 100);
  EXPECT_EQ(q("SELECT \"end\" FROM kernel WHERE correlation=11"), 350);
  EXPECT_EQ(q("SELECT grid_x*10000+grid_y*100+grid_z FROM kernel WHERE correlation=11"), 1280201);
  EXPECT_EQ(q("SELECT block_x FROM kernel WHERE correlation=11"), 256);
  EXPECT_EQ(q("SELECT registers + static_smem + dynamic_smem FROM kernel WHERE correlation=11"), 32 + 1024 + 2048);
  EXPECT_EQ(q("SELECT stream FROM kernel WHERE correlation=12"), 7);
  EXPECT_EQ(q("SELECT pid FROM kernel WHERE correlation=12"), 4242);
  EXPECT_EQ(q("SELECT count(*) FROM kernel WHERE graph_id IS NULL"), 2);
  EXPECT_EQ(sink_->totals()["records_kernel"], 2);
}

TEST_F(DecodeTest, GraphKernelKeepsGraphIds) {
  FakeBuffer b;
  auto k = kernel("node", kOrigin + 1, kOrigin + 2, 5);
  k.graphId = 3;
  k.graphNodeId = 99;
  b.add(k);
  decode(b);
  EXPECT_EQ(q("SELECT graph_id * 1000 + graph_node_id FROM kernel"), 3099);
}

TEST_F(DecodeTest, MemcpyKindsAndPeerCopies) {
  FakeBuffer b;
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = kOrigin + 10;
  m.end = kOrigin + 20;
  m.correlationId = 1;
  b.add(m);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.bytes = 4096;
  m.correlationId = 2;
  b.add(m);
  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 77;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.correlationId = 3;
  p.start = kOrigin;
  p.end = kOrigin + 1;
  b.add(p);
  EXPECT_EQ(decode(b), 3u);
  EXPECT_EQ(qs("SELECT e1.name || '/' || e2.name || '/' || e3.name FROM memcpy m "
               "JOIN enum e1 ON e1.type='copy_kind' AND e1.value=m.copy_kind "
               "JOIN enum e2 ON e2.type='mem_kind' AND e2.value=m.src_kind "
               "JOIN enum e3 ON e3.type='mem_kind' AND e3.value=m.dst_kind WHERE correlation=1"),
            "HtoD/pageable/device");
  EXPECT_EQ(q("SELECT dst_kind FROM memcpy WHERE correlation=2"), 2);
  EXPECT_EQ(q("SELECT sum(bytes) FROM memcpy"), (1 << 20) + 4096 + 77);
  EXPECT_EQ(q("SELECT dst_device FROM memcpy WHERE correlation=3"), 1);
  EXPECT_EQ(q("SELECT count(*) FROM memcpy WHERE src_device IS NULL"), 2);
}

TEST_F(DecodeTest, MemsetApiSyncDeviceAndCorrelation) {
  FakeBuffer b;
  CUpti_ActivityMemset4 ms{};
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.bytes = 512;
  ms.value = 0;
  ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  ms.start = kOrigin + 5;
  ms.end = kOrigin + 6;
  b.add(ms);
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 1;
  a.start = kOrigin + 1;
  a.end = kOrigin + 3;
  a.threadId = 555;
  a.correlationId = 9;
  b.add(a);
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = 2;
  a.correlationId = 10;
  a.returnValue = 2;
  b.add(a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = 3000;  // a name CUPTI does not know
  a.correlationId = 11;
  b.add(a);
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  s.streamId = 7;
  s.cudaEventId = UINT32_MAX;
  s.start = kOrigin + 20;
  s.end = kOrigin + 90;
  s.correlationId = 12;
  b.add(s);
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.numMultiprocessors = 132;
  d.globalMemorySize = 150'000'000'000ull;
  d.computeCapabilityMajor = 9;
  d.uuid.bytes[0] = static_cast<char>(0xab);
  b.add(d);
  CUpti_ActivityExternalCorrelation e{};
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e.externalId = 77;
  e.correlationId = 9;
  b.add(e);
  EXPECT_EQ(decode(b), 7u);
  EXPECT_EQ(q("SELECT bytes FROM memset"), 512);
  EXPECT_EQ(qs("SELECT s.value FROM api_call a JOIN string s ON s.id=a.name_id WHERE correlation=9"), "cudaLaunchKernel");
  EXPECT_EQ(qs("SELECT s.value FROM api_call a JOIN string s ON s.id=a.name_id WHERE correlation=10"), "cuMemAlloc");
  EXPECT_EQ(qs("SELECT s.value FROM api_call a JOIN string s ON s.id=a.name_id WHERE correlation=11"), "runtime_api_3000");
  EXPECT_EQ(q("SELECT domain*10 + return_code FROM api_call WHERE correlation=10"), 22);
  EXPECT_EQ(q("SELECT tid FROM api_call WHERE correlation=9"), 555);
  EXPECT_EQ(q("SELECT type FROM sync"), 3);
  EXPECT_EQ(q("SELECT stream FROM sync"), 7);
  EXPECT_EQ(q("SELECT count(*) FROM sync WHERE event IS NULL"), 1);
  EXPECT_EQ(qs("SELECT name || ' ' || sm_count || ' ' || compute_major || ' ' || substr(uuid,1,2) FROM device"),
            "NVIDIA H200 132 9 ab");
  EXPECT_EQ(q("SELECT external_id FROM external_correlation WHERE correlation=9 AND pid=4242"), 77);
}

// Two streams: stream 13 waits (cudaStreamWaitEvent) for an event recorded on
// stream 7. The wait names the stream and the cudaEventRecord's correlation
// (CUDA_EVENT records); a wait on an event re-recorded since (another sync id)
// and one on an event never seen stay unlinked, and are counted.
TEST_F(DecodeTest, StreamWaitsNameTheRecordAndStreamTheyWaitFor) {
  FakeBuffer b;
  CUpti_ActivityCudaEvent2 e{};
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.contextId = 1;
  e.streamId = 7;
  e.eventId = 3;
  e.correlationId = 40;
  e.cudaEventSyncId = 900;
  b.add(e);
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  s.contextId = 1;
  s.streamId = 13;
  s.cudaEventId = 3;
  s.cudaEventSyncId = 900;
  s.start = kOrigin + 50;
  s.end = kOrigin + 51;
  s.correlationId = 41;
  b.add(s);
  s.correlationId = 42;
  s.cudaEventSyncId = 901;  // a later record of event 3, not decoded yet
  b.add(s);
  s.correlationId = 43;
  s.cudaEventId = 8;  // never recorded
  s.cudaEventSyncId = 902;
  b.add(s);
  CUpti_ActivitySynchronization2 plain{};
  plain.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  plain.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  plain.streamId = 7;
  plain.cudaEventId = UINT32_MAX;
  plain.correlationId = 44;
  b.add(plain);
  EXPECT_EQ(decode(b), 5u);
  EXPECT_EQ(qs("SELECT stream || ' ' || wait_stream || ' ' || event_correlation FROM sync WHERE correlation=41"),
            "13 7 40");
  EXPECT_EQ(q("SELECT count(*) FROM sync WHERE wait_stream IS NULL AND event_correlation IS NULL"), 3);
  EXPECT_EQ(sink_->totals()["sync_waits_unlinked"], 2);
  EXPECT_EQ(sink_->totals()["records_cuda_event"], 1);
}

// cudaEventSynchronize (and cudaEventQuery, which CUPTI reports as one): the
// host waits for an event recorded on stream 7; the sync row names the stream
// and the cudaEventRecord's correlation, as a stream wait does.
TEST_F(DecodeTest, EventSyncsNameTheRecordAndStreamTheyWaitFor) {
  FakeBuffer b;
  CUpti_ActivityCudaEvent2 e{};
  e.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  e.contextId = 1;
  e.streamId = 7;
  e.eventId = 5;
  e.correlationId = 60;
  e.cudaEventSyncId = 700;
  b.add(e);
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  s.contextId = 1;
  s.streamId = UINT32_MAX;
  s.cudaEventId = 5;
  s.cudaEventSyncId = 700;
  s.start = kOrigin + 70;
  s.end = kOrigin + 90;
  s.correlationId = 61;
  b.add(s);
  EXPECT_EQ(decode(b), 2u);
  EXPECT_EQ(qs("SELECT type || ' ' || coalesce(stream, 'null') || ' ' || event || ' ' || wait_stream || ' ' || "
               "event_correlation FROM sync WHERE correlation=61"),
            "1 null 5 7 60");
  EXPECT_EQ(sink_->totals()["sync_waits_unlinked"], 0);
}

// CUPTI records the noisy calls again between enabling the API kinds and being
// told to leave them out (it forgets at every disable); the decoder drops them.
TEST_F(DecodeTest, NoisyCallsAreDroppedAndCounted) {
  FakeBuffer b;
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.start = kOrigin + 1;
  a.end = kOrigin + 2;
  for (uint32_t cbid : {4u, 1u, 4u}) {
    a.cbid = cbid;  // cudaGetDevice, cudaLaunchKernel, cudaGetDevice
    ++a.correlationId;
    b.add(a);
  }
  EXPECT_EQ(decode(b), 3u);
  EXPECT_EQ(q("SELECT count(*) FROM api_call"), 1);
  EXPECT_EQ(q("SELECT correlation FROM api_call"), 2);
  writer_->begin();
  for (const auto& [key, value] : sink_->totals()) writer_->put_stat(sink_->pid, key, value);
  writer_->commit();
  EXPECT_EQ(q("SELECT value FROM collector_stat WHERE key = 'filtered_noisy_api'"), 2);
  EXPECT_EQ(q("SELECT value FROM collector_stat WHERE key = 'records_runtime_api'"), 1);
}

// After cuptiFinalize CUPTI numbers correlation ids from 1 again; the rows of a
// later session must not share ids with the earlier ones (kernels would be
// joined to the launches of another stretch).
TEST_F(DecodeTest, CorrelationIdsStayUniqueAcrossCuptiSessions) {
  decode_session(0, {1, 2, 3});
  decode_session(1, {1, 2});     // restarted: shifted past 3
  decode_session(2, {40, 41});   // went on counting: shifted all the same
  decode_session(3, {2, 1});     // restarted again
  EXPECT_EQ(qs("SELECT group_concat(correlation) FROM (SELECT correlation FROM api_call ORDER BY id)"),
            "1,2,3,4,5,45,46,48,47");
  EXPECT_EQ(q("SELECT count(*) FROM kernel k JOIN api_call a ON a.correlation = k.correlation"), 9);
}

// A session whose API records repeat an id on one thread links nothing from
// there on; the next session starts clean.
TEST_F(DecodeTest, RepeatedApiIdsInASessionAreNotStored) {
  decode_session(0, {1, 2});
  decode_session(1, {5, 5, 5});
  decode_session(2, {1, 2});
  EXPECT_EQ(qs("SELECT group_concat(correlation) FROM (SELECT correlation FROM api_call ORDER BY id)"),
            "1,2,7,0,0,8,9");
  EXPECT_TRUE(sink_->correlation_ever_broken());
}

TEST_F(DecodeTest, MemoryEventsBuildUsageTimeline) {
  FakeBuffer b;
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1000;
  m.address = 0x1000;
  m.timestamp = kOrigin + 1;
  b.add(m);
  m.bytes = 500;
  m.address = 0x2000;
  m.timestamp = kOrigin + 2;
  b.add(m);
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.bytes = 1000;
  m.address = 0x1000;
  m.timestamp = kOrigin + 3;
  b.add(m);
  decode(b);
  EXPECT_EQ(q("SELECT count(*) FROM memory_event WHERE op=1"), 2);
  EXPECT_EQ(q("SELECT count(*) FROM memory_event WHERE op=2"), 1);
  EXPECT_EQ(qs("SELECT group_concat(CAST(value AS INTEGER), ',') FROM (SELECT value FROM counter ORDER BY ts)"),
            "1000,1500,500");
}

CUpti_ActivityOverhead3 overhead(CUpti_ActivityOverheadKind kind, CUpti_ActivityObjectKind object, uint32_t id,
                                 uint64_t start, uint64_t end) {
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = kind;
  o.objectKind = object;
  if (object == CUPTI_ACTIVITY_OBJECT_THREAD) {
    o.objectId.pt.processId = 4242;
    o.objectId.pt.threadId = id;
  } else {
    o.objectId.dcs.deviceId = id;
  }
  o.start = start;
  o.end = end;
  return o;
}

// `--trace ...,overhead`: CUPTI's overhead records become ranges on the thread
// they hit (the main thread for a device's), named by kind; untimed ones and
// those outside the window are dropped; the extra data CUPTI hands over for a
// command-buffer wait is freed (under ASan a leak would fail the test).
TEST_F(DecodeTest, OverheadRecordsBecomeRangesOnTheirThread) {
  sink_->window_end_ns = kOrigin + 1000;
  FakeBuffer b;
  b.add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, CUPTI_ACTIVITY_OBJECT_THREAD, 77, kOrigin + 10, kOrigin + 60));
  b.add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION, CUPTI_ACTIVITY_OBJECT_DEVICE, 0, kOrigin + 100,
                 kOrigin + 400));
  CUpti_ActivityOverhead3 full =
      overhead(CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL, CUPTI_ACTIVITY_OBJECT_THREAD, 78, kOrigin + 500, kOrigin + 520);
  full.overheadData = std::malloc(sizeof(CUpti_ActivityOverheadCommandBufferFullData));
  b.add(full);
  b.add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, CUPTI_ACTIVITY_OBJECT_THREAD, 77, 0, 0));
  b.add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, CUPTI_ACTIVITY_OBJECT_THREAD, 77, kOrigin + 2000,
                 kOrigin + 2100));
  api_.get_version = [](uint32_t* v) {
    *v = 130001;
    return CUPTI_SUCCESS;
  };
  EXPECT_EQ(decode(b), 5u);
  EXPECT_EQ(qs("SELECT group_concat(r.tid || ' ' || s.value || ' ' || r.start || '-' || r.\"end\", '; ') FROM "
               "(SELECT * FROM range WHERE source = 9 AND kind = 1 ORDER BY start) r JOIN string s ON s.id = r.name_id"),
            "77 CUPTI overhead: buffer flush 10-60; 4242 CUPTI overhead: instrumentation 100-400; "
            "78 CUDA overhead: command buffer full 500-520");
  EXPECT_EQ(sink_->totals()["records_overhead"], 3);
  EXPECT_EQ(sink_->totals()["records_overhead_untimed"], 1);
  EXPECT_EQ(sink_->api_tids.count(78), 1u);
}

TEST_F(DecodeTest, UnknownKindsAreCountedNotFatal) {
  FakeBuffer b;
  CUpti_ActivityAPI unknown{};
  unknown.kind = CUPTI_ACTIVITY_KIND_PC_SAMPLING;
  b.add(unknown);
  b.add(kernel("k", kOrigin, kOrigin + 1, 1));
  EXPECT_EQ(decode(b), 2u);
  EXPECT_EQ(sink_->totals()["records_unknown_kind"], 1);
  EXPECT_EQ(q("SELECT count(*) FROM kernel"), 1);
}

TEST_F(DecodeTest, TruncatedBufferStopsAndCounts) {
  FakeBuffer b;
  b.add(kernel("k1", kOrigin, kOrigin + 1, 1));
  b.add(kernel("k2", kOrigin, kOrigin + 1, 2));
  size_t cut = b.size() - 40;  // inside the second record
  EXPECT_EQ(decode(b, cut), 1u);
  EXPECT_EQ(sink_->totals()["truncated_buffers"], 1);
  EXPECT_EQ(q("SELECT count(*) FROM kernel"), 1);
}

TEST_F(DecodeTest, EmptyBufferIsFine) {
  FakeBuffer b;
  EXPECT_EQ(decode(b), 0u);
  EXPECT_EQ(sink_->totals().count("truncated_buffers"), 0u);
}

TEST_F(DecodeTest, RecordingWindowDropsOutsideRows) {
  sink_->window_start_ns = kOrigin + 100;
  sink_->window_end_ns = kOrigin + 200;
  FakeBuffer b;
  b.add(kernel("early", kOrigin + 50, kOrigin + 60, 1));
  b.add(kernel("inside", kOrigin + 150, kOrigin + 160, 2));
  b.add(kernel("late", kOrigin + 250, kOrigin + 260, 3));
  decode(b);
  EXPECT_EQ(q("SELECT correlation FROM kernel"), 2);
  EXPECT_EQ(q("SELECT count(*) FROM kernel"), 1);
}

TEST_F(DecodeTest, NamesWithAnyBytesSurvive) {
  static const char weird[] = "k\"\\\x01\xff\xfe";
  FakeBuffer b;
  b.add(kernel(weird, kOrigin, kOrigin + 1, 1));
  decode(b);
  EXPECT_EQ(qs("SELECT s.value FROM kernel k JOIN string s ON s.id=k.name_id"), std::string(weird));
}

}  // namespace
}  // namespace gpuscope
