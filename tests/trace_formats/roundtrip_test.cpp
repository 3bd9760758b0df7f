// import(export(run)) keeps every count and every duration total exactly,
// for the synthetic recording and for every recording and torch.profiler
// trace committed under tests/data (the GPU machine's files included).
#include <gtest/gtest.h>

#include "trace_formats/export/exporters.h"
#include "trace_formats/import/torch_import.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/reader.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

using test::TempDir;

std::string chrome_then_import(const std::string& db, TempDir& tmp, const std::string& name) {
  std::string json = tmp.file(name + ".json.gz");
  {
    store::Reader r(db);
    export_chrome(r, json, {});
  }
  std::string out = tmp.file(name + ".db");
  import_torch_trace(json, out, {});
  return out;
}

void expect_same_totals(const std::string& a, const std::string& b) {
  auto ta = test::table_totals(a), tb = test::table_totals(b);
  for (const auto& [key, value] : ta) EXPECT_EQ(tb[key], value) << key;
}

TEST(RoundTrip, SyntheticRecordingKeepsCountsAndDurations) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  std::string once = chrome_then_import(tmp.file("s.db"), tmp, "once");
  expect_same_totals(tmp.file("s.db"), once);
  // And again: nothing drifts on a second pass.
  std::string twice = chrome_then_import(once, tmp, "twice");
  expect_same_totals(tmp.file("s.db"), twice);
}

// CUPTI's overhead records (`record --trace ...,overhead`) leave as Kineto's
// "overhead" events and come back as tracer_overhead ranges, not user ranges.
TEST(RoundTrip, TracerOverheadStaysTracerOverhead) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  test::add_tracer_overhead_range(tmp.file("s.db"));
  const std::string back = chrome_then_import(tmp.file("s.db"), tmp, "o");
  store::Reader r(back);
  EXPECT_EQ(r.db().query_text("SELECT s.value || ' ' || (\"end\" - start) FROM range JOIN string s ON s.id = name_id "
                              "WHERE source = " + std::to_string(schema::range_source::tracer_overhead)).value_or(""),
            "CUPTI overhead: buffer flush 50000");
  expect_same_totals(tmp.file("s.db"), back);
}

TEST(RoundTrip, RecordingsInTestData) {
  auto dbs = test::data_files(".db");
  for (const auto& db : dbs) {
    SCOPED_TRACE(db);
    TempDir tmp;
    expect_same_totals(db, chrome_then_import(db, tmp, "r"));
  }
}

TEST(RoundTrip, TorchTracesInTestData) {
  auto traces = test::data_files(".json.gz");
  ASSERT_FALSE(traces.empty()) << "tests/data/torch113_cpu_mlp.json.gz is committed";
  for (const auto& trace : traces) {
    SCOPED_TRACE(trace);
    TempDir tmp;
    import_torch_trace(trace, tmp.file("a.db"), {});
    expect_same_totals(tmp.file("a.db"), chrome_then_import(tmp.file("a.db"), tmp, "b"));
  }
}

}  // namespace
}  // namespace gpuscope::formats
