// Stream waits in the Chrome export carry the links Kineto writes and HTA's
// critical path follows: the stream waited on (wait_on_stream) and the
// correlation of the cudaEventRecord waited for
// (wait_on_cuda_event_record_corr_id). Recordings of schema v1, made before
// the sync table had those columns, still export, without them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace_formats/export/exporters.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "trace_formats/common/error.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace st = schema::sync_type;

// Two streams of one process: a kernel on stream 7, cudaEventRecord on it
// (correlation 11), stream 13 waiting for that record, a kernel on stream 13,
// and a stream synchronize that links nothing.
void two_stream_recording(const std::string& path) {
  store::Writer w(path);
  w.begin();
  w.add(store::ProcessRow{.pid = 100, .exe = "/usr/bin/python3"});
  w.add(store::ThreadRow{.pid = 100, .tid = 100, .name = "python3"});
  w.add(store::DeviceRow{.id = 0, .name = "GPU", .sm_count = 132});
  w.add(store::ApiCallRow{.pid = 100, .tid = 100, .name = "cudaLaunchKernel", .start = 1000, .end = 2000,
                          .correlation = 10});
  w.add(store::KernelRow{.pid = 100, .device = 0, .context = 1, .stream = 7, .correlation = 10, .start = 3000,
                         .end = 9000, .name = "producer"});
  w.add(store::ApiCallRow{.pid = 100, .tid = 100, .name = "cudaEventRecord", .start = 2100, .end = 2200,
                          .correlation = 11});
  w.add(store::ApiCallRow{.pid = 100, .tid = 100, .name = "cudaStreamWaitEvent", .start = 2300, .end = 2400,
                          .correlation = 12});
  w.add(store::SyncRow{.pid = 100, .tid = 100, .type = st::stream_wait_event, .context = 1, .stream = 13,
                       .event = 3, .start = 2300, .end = 2400, .correlation = 12, .wait_stream = 7,
                       .event_correlation = 11});
  w.add(store::ApiCallRow{.pid = 100, .tid = 100, .name = "cudaLaunchKernel", .start = 2500, .end = 2600,
                          .correlation = 13});
  w.add(store::KernelRow{.pid = 100, .device = 0, .context = 1, .stream = 13, .correlation = 13, .start = 9100,
                         .end = 9900, .name = "consumer"});
  w.add(store::SyncRow{.pid = 100, .tid = 100, .type = st::stream_synchronize, .context = 1, .stream = 13,
                       .start = 2700, .end = 9950, .correlation = 14});
  w.commit();
}

std::vector<nlohmann::json> syncs(const std::string& db, const std::string& out) {
  store::Reader r(db);
  export_chrome(r, out, {});
  std::vector<nlohmann::json> found;
  const nlohmann::json doc = nlohmann::json::parse(test::read_file(out));
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "cuda_sync") found.push_back(e);
  return found;
}

TEST(ChromeStreamWaits, TwoStreamWaitsNameTheStreamAndTheEventRecord) {
  test::TempDir tmp;
  two_stream_recording(tmp.file("w.db"));
  std::vector<nlohmann::json> found = syncs(tmp.file("w.db"), tmp.file("w.json"));
  ASSERT_EQ(found.size(), 2u);
  int waits = 0;
  for (const auto& e : found) {
    if (e["name"] != "Stream Wait Event") {
      EXPECT_FALSE(e["args"].contains("wait_on_stream")) << e;
      continue;
    }
    ++waits;
    EXPECT_EQ(e["tid"], 13) << e;  // drawn on the waiting stream
    EXPECT_EQ(e["args"]["wait_on_stream"], 7) << e;
    EXPECT_EQ(e["args"]["wait_on_cuda_event_record_corr_id"], 11) << e;
  }
  EXPECT_EQ(waits, 1);
}

TEST(ChromeStreamWaits, SchemaV1RecordingsExportWithoutTheLinks) {
  test::TempDir tmp;
  two_stream_recording(tmp.file("v1.db"));
  {
    store::Connection c(tmp.file("v1.db"), store::Connection::Mode::kReadWrite);
    c.exec("ALTER TABLE sync DROP COLUMN wait_stream; ALTER TABLE sync DROP COLUMN event_correlation; "
           "UPDATE meta SET value='1' WHERE key='schema_version'");
  }
  std::vector<nlohmann::json> found = syncs(tmp.file("v1.db"), tmp.file("v1.json"));
  ASSERT_EQ(found.size(), 2u);
  for (const auto& e : found) EXPECT_FALSE(e["args"].contains("wait_on_stream")) << e;
  // A v2 file without the columns is damaged, and said to be.
  {
    store::Connection c(tmp.file("v1.db"), store::Connection::Mode::kReadWrite);
    c.exec("UPDATE meta SET value='2' WHERE key='schema_version'");
  }
  EXPECT_THROW(store::Reader r(tmp.file("v1.db")), Error);
}

}  // namespace
}  // namespace gpuscope::formats
