// What `gpuscope record` does to the database after the job (store/finalize.cpp):
// graph launches are derived from their kernels, waits get the thread of the
// API call that waited (CUPTI's synchronization records have none), API calls
// are linked to the innermost op open on their thread, and the WAL is folded back.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "trace_formats/store/cursor.h"
#include "trace_formats/store/finalize.h"
#include "trace_formats/store/sqlite.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

TEST(Finalize, WaitsGetTheThreadOfTheirApiCall) {
  const std::string path = testing::fresh_temp_db("finalize");
  {
    test_support::RecordingBuilder b(path);
    for (int64_t corr : {10, 11, 12})
      b.api({.pid = 5, .tid = 100 + corr, .name = "cudaStreamSynchronize", .correlation = corr});
    // Same correlation, another process.
    b.api({.pid = 6, .tid = 999, .name = "cudaDeviceSynchronize", .correlation = 11});
    for (int64_t corr : {11, 12, 13}) b.sync({.pid = 5, .correlation = corr});  // 13: its call was not recorded
  }
  store::finalize_recording(path);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  using store::rec::Sync;
  store::Cursor<Sync> st(c, {Sync::kCorrelation, Sync::kTid}, "ORDER BY correlation");
  std::vector<std::pair<int64_t, int64_t>> got;
  while (st.next()) got.emplace_back(st->correlation, st->null(Sync::kTid) ? -1 : st->tid);
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{{11, 111}, {12, 112}, {13, -1}}));
}

TEST(Finalize, ApiCallsLinkToTheInnermostOpOpenOnTheirThread) {
  const std::string path = testing::fresh_temp_db("finalize_links");
  {
    test_support::RecordingBuilder b(path);
    b.at(5, 1);
    auto op = [&](int64_t tid, int64_t start, int64_t end, int64_t depth, int64_t ext) {
      b.op({.tid = tid, .name = "aten::op", .start = start, .end = end, .depth = depth, .external_id = ext});
    };
    op(1, 100, 1000, 0, 1);   // A
    op(1, 200, 400, 1, 2);    //   B
    op(1, 500, 900, 1, 3);    //   C
    op(1, 600, 700, 2, 4);    //     D
    op(2, 100, 1000, 0, 5);   // E, another thread
    op(1, 2000, 3000, 0, 6);  // F
    op(1, 2000, 2500, 1, 7);  //   G, starts with its parent
    auto call = [&](int64_t pid, int64_t tid, int64_t corr, int64_t start) {
      b.api({.pid = pid, .tid = tid, .name = "cudaLaunchKernel", .start = start, .end = start + 5, .correlation = corr});
    };
    call(5, 1, 1, 150);   // in A
    call(5, 1, 2, 300);   // in B
    call(5, 1, 3, 450);   // in A again, B has ended
    call(5, 1, 4, 650);   // in D
    call(5, 1, 5, 800);   // in C
    call(5, 1, 6, 1500);  // no op open
    call(5, 2, 7, 300);   // in E
    call(6, 1, 8, 300);   // another process, no ops
    call(5, 1, 9, 2000);  // in G
    call(5, 1, 10, 220);  // CUPTI linked it already: kept
    b.external_correlation(10, 99);
  }
  store::finalize_recording(path);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  auto st = store::Cursor<store::rec::ExternalCorrelation>::all(c, "ORDER BY pid, correlation");
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;
  while (st.next()) got.emplace_back(st->pid, st->correlation, st->external_id);
  EXPECT_EQ(got, (std::vector<std::tuple<int64_t, int64_t, int64_t>>{
                     {5, 1, 1}, {5, 2, 2}, {5, 3, 1}, {5, 4, 4}, {5, 5, 3}, {5, 7, 5}, {5, 9, 7}, {5, 10, 99}}));
}

// On every real recording in tests/data (made with CUPTI's external
// correlation), links rebuilt by thread and time are CUPTI's, one for one.
TEST(Finalize, LinksByThreadAndTimeEqualCuptisOnRealRecordings) {
  namespace fs = std::filesystem;
  using Links = std::map<std::pair<int64_t, int64_t>, int64_t>;
  auto links = [](const std::string& path) {
    store::Connection c(path, store::Connection::Mode::kReadOnly);
    auto st = store::Cursor<store::rec::ExternalCorrelation>::all(c);
    Links out;
    while (st.next()) out[{st->pid, st->correlation}] = st->external_id;
    return out;
  };
  size_t recordings = 0, compared = 0;
  for (const auto& e : fs::directory_iterator(fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data")) {
    if (e.path().extension() != ".db") continue;
    const Links cupti = links(e.path().string());
    if (cupti.empty()) continue;
    SCOPED_TRACE(e.path().filename().string());
    const std::string copy = testing::fresh_temp_db("finalize_" + e.path().stem().string());
    fs::copy_file(e.path(), copy, fs::copy_options::overwrite_existing);
    {
      store::Connection c(copy, store::Connection::Mode::kReadWrite);
      c.exec("DELETE FROM external_correlation");
    }
    store::finalize_recording(copy);
    EXPECT_EQ(links(copy), cupti);
    ++recordings;
    compared += cupti.size();
  }
  EXPECT_GE(recordings, 10u);
  EXPECT_GT(compared, 50000u);
}

// No two API calls share a correlation id, and outside a graph one launch runs
// one kernel: ids that say otherwise (CUPTI after a teardown) link nothing.
TEST(Finalize, ImpossibleCorrelationIdsAreUnlinked) {
  const std::string path = testing::fresh_temp_db("finalize_corr");
  {
    test_support::RecordingBuilder b(path);
    b.at(5, 1);
    auto call = [&](int64_t corr) { b.api({.name = "cudaLaunchKernel", .correlation = corr}); };
    auto kernel = [&](int64_t corr, int64_t graph) {
      b.kernel({.correlation = corr, .name = "k", .graph_id = graph ? graph : store::kNull});
    };
    call(1), kernel(1, 0);                 // a launch and its kernel: kept
    call(2), call(2), kernel(2, 0);        // two calls with one id
    call(3), kernel(3, 0), kernel(3, 0);   // two plain kernels from one launch
    call(4), kernel(4, 7), kernel(4, 7);   // a graph replay: many kernels, one id, kept
    b.sync({.correlation = 2});            // a wait of one of the two calls with id 2
  }
  store::finalize_recording(path);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  EXPECT_EQ(c.query_text("SELECT group_concat(correlation) FROM (SELECT correlation FROM api_call ORDER BY id)"),
            "1,0,0,0,4");
  EXPECT_EQ(c.query_text("SELECT group_concat(correlation) FROM (SELECT correlation FROM kernel ORDER BY id)"),
            "1,0,0,0,4,4");
  // Unlinked, the wait is not given the thread of some other unlinked call.
  EXPECT_EQ(c.query_int("SELECT count(*) FROM sync WHERE correlation = 0 AND tid IS NULL"), 1);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM external_correlation WHERE correlation = 0"), 0);
}

// One graph_launch row per launch of a graph, spanning its kernels, unless the
// process has graph_launch rows already; the counts are the file's.
TEST(Finalize, GraphLaunchesComeFromTheirKernelsAndTheCountsAreReturned) {
  const std::string path = testing::fresh_temp_db("finalize_graphs");
  {
    test_support::RecordingBuilder b(path);
    b.process(test_support::python_process(5));
    b.at(5, 5);
    b.api({.name = "cudaGraphLaunch", .start = 10, .end = 20, .correlation = 1});
    b.kernel({.stream = 3, .correlation = 1, .start = 100, .end = 150, .name = "a", .graph_id = 7});
    b.kernel({.stream = 3, .correlation = 1, .start = 160, .end = 300, .name = "b", .graph_id = 7});
    b.api({.name = "cudaGraphLaunch", .start = 400, .end = 410, .correlation = 2});
    b.kernel({.stream = 3, .correlation = 2, .start = 500, .end = 520, .name = "a", .graph_id = 7});
    b.kernel({.correlation = 3, .start = 600, .end = 610, .name = "plain"});
    b.kernel({.pid = 6, .correlation = 1, .start = 100, .end = 110, .name = "a", .graph_id = 8});
    b.graph_launch({.pid = 6, .graph_id = 8, .correlation = 1, .start = 90, .end = 120});  // CUPTI's: kept alone
    b.writer().put_stat(5, "dropped_ring", 2);
  }
  const store::Finalized f = store::finalize_recording(path);
  EXPECT_EQ(f.unlinked, 0);
  EXPECT_EQ(f.processes, 1);
  EXPECT_EQ(f.kernels, 5);
  EXPECT_EQ(f.api_calls, 2);
  EXPECT_EQ(f.memcpys, 0);
  EXPECT_EQ(f.dropped, 2);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  EXPECT_EQ(c.query_text("SELECT group_concat(row, ' ') FROM (SELECT pid || ':' || correlation || ':' || graph_id || ':' || "
                         "stream || ':' || start || '-' || \"end\" AS row FROM graph_launch ORDER BY pid, correlation)"),
            "5:1:7:3:100-300 5:2:7:3:500-520 6:1:8:0:90-120");
  EXPECT_EQ(c.query_text("PRAGMA journal_mode"), "delete");
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST(Finalize, UnlinkedRowsAreCounted) {
  const std::string path = testing::fresh_temp_db("finalize_unlinked");
  {
    test_support::RecordingBuilder b(path);
    b.at(5, 1);
    b.api({.name = "cudaLaunchKernel", .correlation = 2});
    b.api({.name = "cudaLaunchKernel", .correlation = 2});
    b.kernel({.correlation = 2, .name = "k"});
  }
  EXPECT_EQ(store::finalize_recording(path).unlinked, 3);
}

TEST(Finalize, ANonRecordingIsAnError) {
  const std::string path = testing::fresh_temp_db("finalize_missing");
  EXPECT_THROW(store::finalize_recording(path), Error);
}

}  // namespace
}  // namespace gpuscope
