// torch.profiler import: a hand-written Kineto trace against a golden table
// dump, the same through gzip and tiny parse windows, and a real torch 1.13
// trace checked against an independent JSON parser.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "trace_formats/import/torch_import.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"
#include "tests/trace_formats/formats_test_util.h"
#include "tests/support/golden.h"

namespace gpuscope::formats {
namespace {

using test::TempDir;

const std::string kSmall = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json";
const std::string kGolden = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/golden/";

// Text cells with every non-printable or non-ASCII byte as \xNN, so the
// golden file shows exactly what was stored.
std::string cell(store::Statement& q, int col) {
  if (q.is_null(col)) return "NULL";
  if (sqlite3_column_type(q.raw(), col) != SQLITE_TEXT) return std::to_string(q.int64(col));
  std::string out;
  for (unsigned char c : q.text(col)) {
    if (c >= 0x20 && c < 0x7f && c != ',') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string dump(const std::string& db_path) {
  store::Reader r(db_path);
  std::string out;
  auto section = [&](const std::string& title, const std::string& sql) {
    out += "# " + title + "\n";
    auto q = r.query(sql);
    while (q.step()) {
      for (int i = 0; i < q.column_count(); ++i) out += (i ? "," : "") + cell(q, i);
      out += "\n";
    }
  };
  section("meta", "SELECT key, value FROM meta WHERE key NOT IN ('gpuscope_version', 'imported_from') ORDER BY key");
  section("process", "SELECT pid, exe, start, \"end\", start_utc_ns, rank, world_size, cupti_status FROM process");
  section("thread", "SELECT * FROM thread ORDER BY pid, tid");
  section("device", "SELECT * FROM device");
  section("op", "SELECT o.pid, o.tid, n.value, o.start, o.\"end\", o.depth, o.seq_nr, o.backward, o.scope, "
                "s.value, d.value, o.external_id FROM op o JOIN string n ON n.id = o.name_id "
                "LEFT JOIN string s ON s.id = o.shapes_id LEFT JOIN string d ON d.id = o.dtypes_id ORDER BY o.id");
  section("range", "SELECT r.pid, r.tid, r.source, r.kind, dm.value, n.value, r.start, r.\"end\", r.depth, r.category "
                   "FROM range r JOIN string n ON n.id = r.name_id LEFT JOIN string dm ON dm.id = r.domain_id "
                   "ORDER BY r.id");
  section("step", "SELECT pid, number, start, \"end\", source FROM step ORDER BY id");
  section("api_call", "SELECT a.pid, a.tid, a.domain, a.cbid, n.value, a.start, a.\"end\", a.correlation "
                      "FROM api_call a JOIN string n ON n.id = a.name_id ORDER BY a.id");
  section("external_correlation", "SELECT * FROM external_correlation ORDER BY pid, correlation");
  section("kernel", "SELECT k.pid, k.device, k.context, k.stream, k.correlation, k.start, k.\"end\", n.value, "
                    "k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.registers, k.static_smem, "
                    "k.dynamic_smem FROM kernel k JOIN string n ON n.id = k.name_id ORDER BY k.id");
  section("memcpy", "SELECT pid, device, context, stream, correlation, start, \"end\", copy_kind, src_kind, "
                    "dst_kind, bytes FROM memcpy ORDER BY id");
  section("memset", "SELECT pid, device, stream, correlation, start, \"end\", bytes, mem_kind FROM memset ORDER BY id");
  section("sync", "SELECT pid, tid, type, context, stream, start, \"end\", correlation FROM sync ORDER BY id");
  section("memory_event", "SELECT pid, device, ts, op, source, mem_kind, address, bytes, total_allocated, "
                          "total_reserved FROM memory_event ORDER BY id");
  section("collector_stat", "SELECT * FROM collector_stat ORDER BY key");
  return out;
}

ImportResult import_file(const std::string& trace, const std::string& db, size_t window = size_t{4} << 20) {
  ImportOptions opt;
  opt.window = window;
  return import_torch_trace(trace, db, opt);
}

std::string gzip_text(const std::string& text) {
  uLongf cap = compressBound(static_cast<uLong>(text.size())) + 64;
  std::string out(cap, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Import, KinetoTraceMatchesGolden) {
  TempDir tmp;
  ImportResult r = import_file(kSmall, tmp.file("small.db"));
  EXPECT_EQ(r.counts.kernels, 2);
  EXPECT_EQ(r.counts.memcpys, 3);
  EXPECT_EQ(r.counts.memsets, 1);
  EXPECT_EQ(r.counts.api_calls, 6);
  EXPECT_EQ(r.counts.unknown.at("a_future_category"), 1);
  EXPECT_EQ(r.counts.unknown.count("overhead"), 0u);  // CUPTI's overhead: a tracer_overhead range
  std::string diff = test_support::golden_mismatch(kGolden + "kineto_small.import.csv", dump(tmp.file("small.db")));
  EXPECT_TRUE(diff.empty()) << diff;
}

TEST(Import, SameRowsThroughGzipAndAnyWindowSize) {
  TempDir tmp;
  import_file(kSmall, tmp.file("ref.db"));
  std::string expected = dump(tmp.file("ref.db"));
  test::write_file(tmp.file("small.json.gz"), gzip_text(test::read_file(kSmall)));
  import_file(tmp.file("small.json.gz"), tmp.file("gz.db"));
  EXPECT_EQ(dump(tmp.file("gz.db")), expected);
  // Tiny windows split every token across refills and force the window to grow.
  for (size_t window : {16u, 61u, 1000u}) {
    std::string db = tmp.file("w" + std::to_string(window) + ".db");
    import_file(kSmall, db, window);
    EXPECT_EQ(dump(db), expected) << "window " << window;
  }
}

// A UTF-8 byte-order mark before the JSON (issue 50): the same rows, plain or
// inside a .json.gz, in any window, never "not valid JSON at byte 0".
TEST(Import, AByteOrderMarkIsSkippedPlainOrGzipped) {
  TempDir tmp;
  import_file(kSmall, tmp.file("ref.db"));
  const std::string expected = dump(tmp.file("ref.db"));
  const std::string text = "\xef\xbb\xbf" + test::read_file(kSmall);
  test::write_file(tmp.file("bom.json"), text);
  test::write_file(tmp.file("bom.json.gz"), gzip_text(text));
  import_file(tmp.file("bom.json"), tmp.file("bom.db"));
  EXPECT_EQ(dump(tmp.file("bom.db")), expected);
  import_file(tmp.file("bom.json.gz"), tmp.file("bomgz.db"));
  EXPECT_EQ(dump(tmp.file("bomgz.db")), expected);
  import_file(tmp.file("bom.json.gz"), tmp.file("bomgz16.db"), 16);
  EXPECT_EQ(dump(tmp.file("bomgz16.db")), expected);
}

TEST(Import, ConcatenatedGzipMembersAreOneStream) {
  TempDir tmp;
  std::string text = test::read_file(kSmall);
  size_t half = text.size() / 2;
  test::write_file(tmp.file("two.json.gz"), gzip_text(text.substr(0, half)) + gzip_text(text.substr(half)));
  import_file(kSmall, tmp.file("ref.db"));
  import_file(tmp.file("two.json.gz"), tmp.file("two.db"));
  EXPECT_EQ(dump(tmp.file("two.db")), dump(tmp.file("ref.db")));
}

TEST(Import, UnsortedEventsStillNestAndTimesStayPositive) {
  TempDir tmp;
  // Children before parents, and a later event earlier than the first one.
  test::write_file(tmp.file("unsorted.json"), R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 2, "ts": 20.5, "dur": 5},
    {"ph": "X", "cat": "cpu_op", "name": "parent", "pid": 1, "tid": 2, "ts": 10, "dur": 50},
    {"ph": "X", "cat": "cpu_op", "name": "grandchild", "pid": 1, "tid": 2, "ts": 21, "dur": 1},
    {"ph": "X", "cat": "user_annotation", "name": "outer", "pid": 1, "tid": 2, "ts": 30, "dur": 2},
    {"ph": "X", "cat": "user_annotation", "name": "early", "pid": 1, "tid": 2, "ts": 5, "dur": 40}
  ]})");
  import_file(tmp.file("unsorted.json"), tmp.file("u.db"));
  store::Reader r(tmp.file("u.db"));
  auto q = r.query(
      "SELECT n.value AS name, o.start AS start, o.depth AS depth FROM op o JOIN string n ON n.id = o.name_id "
      "ORDER BY o.start");
  std::vector<std::tuple<std::string, int64_t, int64_t>> rows;
  while (q.step()) rows.emplace_back(std::string(q.text("name")), q.int64("start"), q.int64("depth"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], std::make_tuple(std::string("parent"), int64_t{5000}, int64_t{0}));
  EXPECT_EQ(rows[1], std::make_tuple(std::string("child"), int64_t{15500}, int64_t{1}));
  EXPECT_EQ(rows[2], std::make_tuple(std::string("grandchild"), int64_t{16000}, int64_t{2}));
  EXPECT_EQ(r.db().query_int("SELECT min(start) FROM range").value_or(-1), 0);
  EXPECT_EQ(r.db().query_int("SELECT depth FROM range WHERE start = 25000").value_or(-1), 1);
  EXPECT_EQ(r.meta("origin_ns"), "5000");
}

// torch's last ProfilerStep#N holds no work and is not a step; it is found
// per process (one grouped pass since the per-row subquery made the import
// quadratic in the steps; process 2's steps start later, so a last step
// taken over all processes would miss process 1's), and a last step that
// holds work stays.
TEST(Import, TheEmptyLastProfilerStepOfEachProcessIsDropped) {
  TempDir tmp;
  test::write_file(tmp.file("steps.json"), R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 2, "tid": 2, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 2, "tid": 2, "ts": 110, "dur": 5},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 2, "tid": 2, "ts": 200, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 2, "tid": 2, "ts": 250, "dur": 5}
  ]})");
  ImportResult res = import_file(tmp.file("steps.json"), tmp.file("s.db"));
  EXPECT_EQ(res.counts.steps, 3);
  store::Reader r(tmp.file("s.db"));
  store::Cursor<store::rec::Step> q(r.db(), {store::rec::Step::kPid, store::rec::Step::kNumber},
                                    "ORDER BY pid, number");
  std::vector<std::pair<int64_t, int64_t>> steps;
  while (q.next()) steps.emplace_back(q->pid, q->number);
  EXPECT_EQ(steps, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 1}, {2, 2}}));
}

// The origin look-ahead must not change a row: with none, the first event
// sets the origin and finish() shifts every table; with a window that ends
// before the earliest event, that shift still happens; with a window that
// covers it, the origin is right from the start.
TEST(Import, SameRowsWithAnyOriginLookahead) {
  TempDir tmp;
  // "early" is the earliest event and comes fourth; the kernel and API call
  // come before it, so every kind of table is shifted without look-ahead.
  test::write_file(tmp.file("late_origin.json"), R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 2, "ts": 20.5, "dur": 5, "args": {"External id": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 21, "dur": 2,
     "args": {"External id": 3, "correlation": 9}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 4,
     "args": {"device": 0, "stream": 7, "correlation": 9}},
    {"ph": "X", "cat": "user_annotation", "name": "early", "pid": 1, "tid": 2, "ts": 5, "dur": 40}
  ]})");
  for (const std::string& trace : {tmp.file("late_origin.json"), kSmall}) {
    std::string expected;
    for (size_t lookahead : {size_t{0}, size_t{1}, size_t{3}, size_t{4}, size_t{8192}}) {
      std::string db = tmp.file("l" + std::to_string(lookahead) + ".db");
      ImportOptions opt;
      opt.lookahead_events = lookahead;
      import_torch_trace(trace, db, opt);
      std::string got = dump(db);
      if (lookahead == 0) {
        expected = got;
        if (trace == tmp.file("late_origin.json")) {
          EXPECT_NE(got.find("origin_ns,5000\n"), std::string::npos) << got;
          EXPECT_NE(got.find(",9,25000,29000,k,"), std::string::npos) << got;  // kernel start and end, shifted
        }
      } else {
        EXPECT_EQ(got, expected) << trace << " with a look-ahead of " << lookahead << " events";
      }
      std::filesystem::remove(db);
    }
  }
}

TEST(Import, OldKinetoShapes) {
  TempDir tmp;
  // torch 1.8-era traces: "stream 7" tids, categories in capitals, absolute
  // epoch microseconds and no baseTimeNanoseconds.
  test::write_file(tmp.file("old.json"), R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 77, "tid": "thread 3", "ts": 1620000000000100, "dur": 9,
     "args": {"External id": 4}},
    {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": "thread 3", "ts": 1620000000000101,
     "dur": 2, "args": {"correlation": 9, "external id": 4}},
    {"ph": "X", "cat": "Kernel", "name": "sgemm", "pid": 0, "tid": "stream 7", "ts": 1620000000000110, "dur": 3,
     "args": {"correlation": 9, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pagable -> Device)", "pid": 0, "tid": "stream 7",
     "ts": 1620000000000120, "dur": 1, "args": {"bytes": 8}}
  ]})J");
  ImportResult res = import_file(tmp.file("old.json"), tmp.file("old.db"));
  EXPECT_EQ(res.counts.ops, 1);
  EXPECT_EQ(res.counts.api_calls, 1);
  EXPECT_EQ(res.counts.kernels, 1);
  EXPECT_EQ(res.counts.correlations, 1);
  store::Reader r(tmp.file("old.db"));
  EXPECT_EQ(r.meta("origin_utc_ns"), "1620000000000100000");
  EXPECT_EQ(r.db().query_int("SELECT tid FROM op").value_or(-1), 3);
  EXPECT_EQ(r.db().query_int("SELECT stream FROM memcpy").value_or(-1), 7);
  EXPECT_EQ(r.db().query_int("SELECT src_kind FROM memcpy").value_or(-1), 1);  // "Pagable": Kineto's spelling
  EXPECT_EQ(r.db().query_int("SELECT pid FROM kernel").value_or(-1), 77);
  EXPECT_EQ(r.db().query_int("SELECT external_id FROM external_correlation WHERE correlation = 9").value_or(-1), 4);
}

TEST(Import, GpuEventsBeforeTheirProcess) {
  TempDir tmp;
  // Kineto may write device activity first: its owner is only known later.
  test::write_file(tmp.file("gpu_first.json"), R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 2,
     "args": {"device": 0, "stream": 7, "correlation": 5, "graph id": 3}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 103, "dur": 1,
     "args": {"device": 0, "stream": 7, "correlation": 6, "bytes": 64}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "g", "pid": 0, "tid": 7, "ts": 99, "dur": 5},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 77, "tid": 78, "ts": 90, "dur": 3,
     "args": {"correlation": 5, "External id": 9}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 77, "tid": 78, "ts": 80, "dur": 30,
     "args": {"External id": 9}}
  ]})J");
  import_file(tmp.file("gpu_first.json"), tmp.file("g.db"));
  store::Reader r(tmp.file("g.db"));
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM kernel WHERE pid = 77").value_or(-1), 1);
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM memset WHERE pid = 77").value_or(-1), 1);
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM range WHERE pid = 77").value_or(-1), 1);
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM graph_launch WHERE pid = 77 AND graph_id = 3").value_or(-1), 1);
  EXPECT_EQ(r.db().query_int("SELECT min(start) FROM op").value_or(-1), 0);  // the op at 80 µs is the earliest
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM process").value_or(-1), 1);
}

// The torch 1.13 trace made on this CPU machine by samples/torch/train_mlp.py:
// the legacy profiler's bare array without categories. Expected numbers come
// from an independent parser (nlohmann::json) over the same file.
TEST(Import, Torch113CpuTrace) {
  std::string path = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/torch113_cpu_mlp.json.gz";
  nlohmann::json doc = nlohmann::json::parse(test::gunzip_file(path));
  const auto& events = doc.is_array() ? doc : doc.at("traceEvents");
  int64_t complete = 0, steps = 0, special = 0;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X") continue;
    ++complete;
    std::string name = e.value("name", "");
    if (name.rfind("ProfilerStep#", 0) == 0) ++steps;
    if (name.rfind("ProfilerStep#", 0) == 0 || name.rfind("enumerate(DataLoader)#", 0) == 0 ||
        name.rfind("Optimizer.", 0) == 0)
      ++special;
  }
  ASSERT_GT(steps, 0);
  TempDir tmp;
  ImportResult r = import_file(path, tmp.file("t.db"));
  EXPECT_EQ(r.counts.ops + r.counts.ranges, complete);
  EXPECT_EQ(r.counts.ranges, special);
  EXPECT_EQ(r.counts.steps, steps);
  EXPECT_TRUE(r.counts.unknown.empty());
  store::Reader db(tmp.file("t.db"));
  EXPECT_EQ(db.meta("source"), "torch.profiler import");
  EXPECT_EQ(db.count("process"), 1);
  EXPECT_GT(db.db().query_int("SELECT count(*) FROM op WHERE depth > 0").value_or(0), 0);
}

}  // namespace
}  // namespace gpuscope::formats
