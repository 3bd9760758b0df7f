// The builder writes exactly the rows it was given, with the defaults its
// header promises: the store reader reads them back column by column.
#include "tests/support/recording_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace_formats/store/reader.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope::test_support {
namespace {

namespace sc = schema;

// Every row of `sql`, its columns joined by '|', NULL as "-".
std::vector<std::string> rows(const std::string& path, std::string_view sql) {
  store::Reader r(path);
  store::Statement st = r.query(sql);
  std::vector<std::string> out;
  while (st.step()) {
    std::string row;
    for (int c = 0; c < st.column_count(); ++c) {
      if (c) row += '|';
      row += st.is_null(c) ? std::string("-") : std::string(st.text(c));
    }
    out.push_back(row);
  }
  return out;
}

using Rows = std::vector<std::string>;

TEST(RecordingBuilder, WritesTheProcessThreadsDeviceAndMeta) {
  const std::string path = testing::fresh_temp_db("builder_setup");
  {
    RecordingBuilder b(path);
    store::ProcessRow p = python_process(40, "node7");
    p.rank = 3;
    b.meta("job_key", "k1").process(p).thread(41, "pt_autograd_0");
    b.process({.pid = 50, .host = "node8"}, "");  // no main thread row
    b.device({.id = 1, .name = "NVIDIA H200", .sm_count = 132});
  }
  EXPECT_EQ(rows(path, "SELECT value FROM meta WHERE key = 'job_key'"), Rows{"k1"});
  EXPECT_EQ(rows(path, "SELECT pid, host, exe, cmdline, rank, cupti_status FROM process ORDER BY pid"),
            (Rows{"40|node7|/usr/bin/python3|python3 train.py|3|ok", "50|node8|||-|"}));
  EXPECT_EQ(rows(path, "SELECT pid, tid, name FROM thread ORDER BY tid"),
            (Rows{"40|40|python3", "40|41|pt_autograd_0"}));
  EXPECT_EQ(rows(path, "SELECT id, name, sm_count FROM device"), Rows{"1|NVIDIA H200|132"});
}

TEST(RecordingBuilder, LaunchesShareAFreshCorrelationAndTheCurrentProcess) {
  const std::string path = testing::fresh_temp_db("builder_launch");
  {
    RecordingBuilder b(path);
    b.process(python_process(7));
    EXPECT_EQ(b.launch({.name = "cudaLaunchKernel", .start = 10, .end = 15},
                       store::KernelRow{.stream = 13, .start = 20, .end = 30, .name = "gemm"}, /*external_id=*/5),
              1);
    EXPECT_EQ(b.launch({.name = "cudaMemcpyAsync", .start = 40, .end = 45},
                       store::MemcpyRow{.start = 50, .end = 60, .copy_kind = sc::copy_kind::HtoD, .bytes = 64}),
              2);
    EXPECT_EQ(b.launch({.name = "cudaMemsetAsync", .start = 70, .end = 75},
                       store::MemsetRow{.start = 80, .end = 81, .bytes = 8}),
              3);
    EXPECT_EQ(b.launch({.name = "cudaStreamSynchronize", .start = 90, .end = 100},
                       store::SyncRow{.type = sc::sync_type::stream_synchronize, .start = 90, .end = 100}),
              4);
    EXPECT_EQ(b.next_correlation(), 5);
    // An explicit pid or tid is kept.
    b.api({.pid = 8, .tid = 9, .name = "cudaFree", .start = 110, .end = 120, .correlation = 5});
  }
  EXPECT_EQ(rows(path, "SELECT a.pid, a.tid, s.value, a.start, a.\"end\", a.correlation FROM api_call a "
                       "JOIN string s ON s.id = a.name_id ORDER BY a.id"),
            (Rows{"7|7|cudaLaunchKernel|10|15|1", "7|7|cudaMemcpyAsync|40|45|2", "7|7|cudaMemsetAsync|70|75|3",
                  "7|7|cudaStreamSynchronize|90|100|4", "8|9|cudaFree|110|120|5"}));
  EXPECT_EQ(rows(path, "SELECT k.pid, k.stream, k.correlation, k.start, k.\"end\", s.value FROM kernel k "
                       "JOIN string s ON s.id = k.name_id"),
            Rows{"7|13|1|20|30|gemm"});
  EXPECT_EQ(rows(path, "SELECT pid, correlation, external_id FROM external_correlation"), Rows{"7|1|5"});
  EXPECT_EQ(rows(path, "SELECT pid, correlation, copy_kind, bytes FROM memcpy"), Rows{"7|2|1|64"});
  EXPECT_EQ(rows(path, "SELECT pid, correlation, bytes FROM memset"), Rows{"7|3|8"});
  // SyncRow's tid is NULL unless set: not a 0 to default.
  EXPECT_EQ(rows(path, "SELECT pid, tid, type, correlation FROM sync"), Rows{"7|-|3|4"});
}

TEST(RecordingBuilder, CpuRowsTakeTheCurrentThread) {
  const std::string path = testing::fresh_temp_db("builder_cpu");
  {
    RecordingBuilder b(path);
    b.process(python_process(7)).thread(70, "worker");
    b.step(0, 100, 900);
    b.dataloader(100, 200);
    b.op({.name = "aten::mm", .start = 210, .end = 300, .shapes = "[[2,2]]"});
    b.at(7, 70).range({.source = sc::range_source::torch_user, .name = "gloo:all_reduce", .start = 300, .end = 800});
    b.memory({.ts = 310, .bytes = 1024});
    b.counter({.device = 0, .name = "nvml_sm_util_pct", .ts = 320, .value = 42.5});
    b.graph_launch({.graph_id = 3, .correlation = 9, .start = 400, .end = 500});
  }
  EXPECT_EQ(rows(path, "SELECT pid, number, start, \"end\", source FROM step"), Rows{"7|0|100|900|2"});
  EXPECT_EQ(rows(path, "SELECT r.pid, r.tid, r.source, s.value, r.start, r.\"end\", r.depth FROM range r "
                       "JOIN string s ON s.id = r.name_id ORDER BY r.id"),
            (Rows{"7|7|3|" + std::string(kDataLoaderNext) + "|100|200|0", "7|70|2|gloo:all_reduce|300|800|-"}));
  EXPECT_EQ(rows(path, "SELECT o.pid, o.tid, s.value, o.start, o.\"end\", h.value, o.dtypes_id FROM op o "
                       "JOIN string s ON s.id = o.name_id JOIN string h ON h.id = o.shapes_id"),
            Rows{"7|7|aten::mm|210|300|[[2,2]]|-"});
  EXPECT_EQ(rows(path, "SELECT pid, ts, op, source, bytes FROM memory_event"), Rows{"7|310|1|1|1024"});
  EXPECT_EQ(rows(path, "SELECT c.pid, c.device, s.value, c.ts, c.value FROM counter c JOIN string s ON s.id = c.name_id"),
            Rows{"7|0|nvml_sm_util_pct|320|42.5"});
  EXPECT_EQ(rows(path, "SELECT pid, graph_id, correlation, start, \"end\" FROM graph_launch"), Rows{"7|3|9|400|500"});
}

TEST(RecordingBuilder, ReplacesOrAppendsAndCommitsInSteps) {
  const std::string path = testing::fresh_temp_db("builder_open");
  {
    RecordingBuilder b(path);
    b.unjournaled().process(python_process(1));
    b.step(0, 0, 10);
    b.commit();
    b.step(1, 10, 20);
    b.finish();
    b.finish();  // once only
  }
  EXPECT_EQ(rows(path, "SELECT pid, number FROM step"), (Rows{"1|0", "1|1"}));
  {
    RecordingBuilder b(path, RecordingBuilder::Open::kAppend);
    b.process(python_process(2)).step(0, 0, 10);
  }
  EXPECT_EQ(rows(path, "SELECT pid, number FROM step"), (Rows{"1|0", "1|1", "2|0"}));
  {
    RecordingBuilder b(path);
    b.process(python_process(3));
  }
  EXPECT_EQ(rows(path, "SELECT pid FROM process"), Rows{"3"});
  EXPECT_EQ(rows(path, "SELECT count(*) FROM step"), Rows{"0"});
}

}  // namespace
}  // namespace gpuscope::test_support
