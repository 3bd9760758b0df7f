// Numbers an event cannot mean (trace_event.cpp): a ts or dur that is no
// number, beyond int64 or the time limits, a negative ts or duration, a pid or tid
// beyond int64. Such an event is dropped and counted by reason, never stored
// saturated; the rest of the trace imports as it would without it.
#include <gtest/gtest.h>

#include <string>

#include "trace_formats/import/importer.h"
#include "trace_formats/import/torch_import.h"
#include "trace_formats/store/reader.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

using test::TempDir;

std::string kernel(const std::string& name, const std::string& ts, const std::string& dur,
                   const std::string& pid = "0") {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": )" + pid + R"(, "tid": 7, "ts": )" + ts +
         R"(, "dur": )" + dur + R"(, "args": {"device": 0, "stream": 7, "correlation": 1}})";
}

std::string trace(const std::vector<std::string>& events) {
  std::string s = R"({"traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "\n") + events[i];
  return s + "\n]}";
}

ImportResult import_text(const TempDir& tmp, const std::string& text) {
  test::write_file(tmp.file("t.json"), text);
  return import_torch_trace(tmp.file("t.json"), tmp.file("t.db"), {});
}

TEST(TraceEvent, BadNumbersDropTheEventAndAreCountedByReason) {
  TempDir tmp;
  ImportResult r = import_text(
      tmp, trace({
               kernel("good", "100", "5"),
               kernel("ts_1e300", "1e300", "5"),
               kernel("ts_2_64", "18446744073709551616", "5"),
               kernel("ts_1e999", "1e999", "5"),
               kernel("ts_string", R"("abc")", "5"),
               kernel("ts_nan", "NaN", "5"),
               kernel("ts_null", "null", "5"),
               kernel("dur_1e300", "200", "1e300"),
               kernel("dur_2_64", "200", "18446744073709551616"),
               kernel("dur_negative", "200", "-5"),
               kernel("ts_negative", "-5", "5"),  // would stretch the recording back to 1970 (issue 50)
               kernel("dur_infinity", "200", "Infinity"),
               kernel("pid_2_64", "200", "5", "18446744073709551616"),
               R"({"ph": "X", "cat": "cpu_op", "name": "no_ts", "pid": 0, "tid": 1, "dur": 5})",
               R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 0, "tid": 1, "ts": 110, "dur": 5})",
           }));
  EXPECT_EQ(r.counts.events, 15);
  EXPECT_EQ(r.counts.kernels, 1);
  EXPECT_EQ(r.counts.ops, 1);
  const std::map<std::string, int64_t> expected = {
      {"dur not a number", 1}, {"dur out of range", 2}, {"negative dur", 1}, {"negative ts", 1}, {"no ts", 1},
      {"pid out of range", 1}, {"ts not a number", 3},  {"ts out of range", 3},
  };
  EXPECT_EQ(r.counts.dropped, expected);
  EXPECT_EQ(import_dropped_line(r),
            "dropped 13 of 15 events: dur not a number 1, dur out of range 2, negative dur 1, negative ts 1, no ts 1, "
            "pid out of range 1, ts not a number 3, ts out of range 3");

  store::Reader db(tmp.file("t.db"));
  auto q = db.query(
      "SELECT s.value AS name, k.start AS start, k.\"end\" AS \"end\", typeof(k.start) AS start_type, "
      "typeof(k.\"end\") AS end_type FROM kernel k JOIN string s ON s.id = k.name_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text("name"), "good");
  EXPECT_EQ(q.int64("start"), 0);  // the origin is the good kernel, not a dropped time
  EXPECT_EQ(q.int64("end"), 5000);
  EXPECT_EQ(q.text("start_type"), "integer");
  EXPECT_EQ(q.text("end_type"), "integer");
  EXPECT_FALSE(q.step());
  EXPECT_EQ(db.db().query_int("SELECT \"end\" FROM process").value_or(-1), 15000);  // the op ends last
  EXPECT_EQ(db.db().query_int("SELECT value FROM collector_stat WHERE key = 'import_dropped:ts out of range'"), 3);
  EXPECT_EQ(db.db().query_int("SELECT value FROM collector_stat WHERE key = 'import_dropped:no ts'"), 1);
}

TEST(TraceEvent, TimesUpToTheLimitsAreKept) {
  TempDir tmp;
  // Absolute epoch microseconds (older Kineto), a duration of a day, int64
  // pids at both limits: all real numbers, nothing dropped.
  ImportResult r = import_text(tmp, trace({
                                        kernel("epoch", "1669990000123456.5", "86400000000"),
                                        kernel("late", "1669990000123466", "1", "9223372036854775807"),
                                        kernel("min_pid", "1669990000123467", "0", "-9223372036854775807"),
                                    }));
  EXPECT_EQ(r.counts.kernels, 3);
  EXPECT_TRUE(r.counts.dropped.empty());
  EXPECT_EQ(import_dropped_line(r), "");
  store::Reader db(tmp.file("t.db"));
  EXPECT_EQ(db.db().query_int("SELECT max(\"end\") FROM kernel"), int64_t{86400000000} * 1000);
}

TEST(TraceEvent, ABadEventIsDroppedWhicheverMemberComesFirst) {
  TempDir tmp;
  // args before ph, dur before ts: the reason is the first bad member met.
  ImportResult r = import_text(
      tmp, trace({
               R"({"args": {"device": 0}, "dur": -1, "ts": 1e300, "ph": "X", "cat": "kernel", "name": "k", "pid": 0})",
               kernel("good", "100", "5"),
           }));
  EXPECT_EQ(r.counts.kernels, 1);
  EXPECT_EQ(r.counts.dropped, (std::map<std::string, int64_t>{{"negative dur", 1}}));
}

}  // namespace
}  // namespace gpuscope::formats
