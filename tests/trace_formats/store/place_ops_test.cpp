// Ops recorded in some steps only (GPUSCOPE_TORCH_OP_STEPS): after the job
// the other steps get the ops of a recorded step whose GPU calls match, moved
// between the same calls (store/place_ops.cpp), and are then linked as usual.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "trace_formats/store/cursor.h"
#include "trace_formats/store/finalize.h"
#include "trace_formats/store/place_ops.h"
#include "trace_formats/store/sqlite.h"
#include "tests/support/recording_builder.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

// One step on the main thread: an op around two launches, a CPU-only op, and
// a copy; `extra` adds a launch the other steps do not make.
void add_step(test_support::RecordingBuilder& b, int64_t number, int64_t t0, bool ops, bool extra = false) {
  b.step(number, t0, t0 + 1000);
  auto call = [&](const char* name, int64_t start, int64_t end) {
    b.api({.name = name, .start = t0 + start, .end = t0 + end, .correlation = b.next_correlation()});
  };
  call("cudaGetDevice", 50, 60);  // not a GPU call: left out of the matching
  call("cudaLaunchKernel", 110, 130);
  call("cudaLaunchKernel", 210, 230);
  call("cudaMemcpyAsync", 600, 650);
  if (extra) call("cudaLaunchKernel", 800, 820);
  if (number % 2 == 0) call("cudaDeviceSynchronize", 900, 950);  // a script's own timing, some steps only: not matched
  if (!ops) return;
  b.op({.name = "aten::linear", .start = t0 + 100, .end = t0 + 300, .depth = 0, .shapes = "[[4,8]]", .external_id = number * 10 + 1});
  b.op({.name = "aten::addmm", .start = t0 + 200, .end = t0 + 250, .depth = 1, .external_id = number * 10 + 2});
  b.op({.name = "aten::view", .start = t0 + 400, .end = t0 + 420, .depth = 0, .external_id = number * 10 + 3});
  b.op({.name = "aten::copy_", .start = t0 + 590, .end = t0 + 700, .depth = 0, .external_id = number * 10 + 4});
}

TEST(PlaceOps, StepsWithoutOpsGetTheOpsOfAMatchingStepBetweenTheSameCalls) {
  const std::string path = testing::fresh_temp_db("place_ops");
  {
    test_support::RecordingBuilder b(path);
    b.meta("torch_op_steps", "2/5");
    b.at(5, 5);
    add_step(b, 0, 10000, true);
    add_step(b, 1, 12000, true);
    add_step(b, 2, 14000, false);
    add_step(b, 3, 16000, false, /*extra=*/true);  // matches no recorded step
    // Step 4 runs twice as slow: the ops stretch with the calls around them.
    b.step(4, 18000, 20000);
    for (auto [name, start, end] : {std::tuple{"cudaLaunchKernel", 220, 260}, {"cudaLaunchKernel", 420, 460},
                                    {"cudaMemcpyAsync", 1200, 1300}})
      b.api({.name = name, .start = 18000 + start, .end = 18000 + end, .correlation = b.next_correlation()});
  }
  const store::Finalized f = store::finalize_recording(path);
  EXPECT_EQ(f.placed.steps_placed, 2);
  EXPECT_EQ(f.placed.steps_unplaced, 1);
  EXPECT_EQ(f.placed.ops, 8);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  EXPECT_EQ(c.query_text("SELECT value FROM meta WHERE key = 'ops_placed_steps'"), "2");
  EXPECT_EQ(c.query_text("SELECT value FROM meta WHERE key = 'ops_unplaced_steps'"), "1");
  // Step 2: the recorded step's times, shifted (same spacing of calls).
  EXPECT_EQ(c.query_text("SELECT group_concat(row, ' ') FROM (SELECT n.value || '@' || (o.start - 14000) || '-' || "
                         "(o.\"end\" - 14000) || ':' || o.depth || ':' || coalesce(sh.value, '') AS row FROM op o "
                         "JOIN string n ON n.id = o.name_id LEFT JOIN string sh ON sh.id = o.shapes_id "
                         "WHERE o.start >= 14000 AND o.start < 16000 ORDER BY o.start)"),
            "aten::linear@100-300:0:[[4,8]] aten::addmm@200-250:1: aten::view@400-420:0: aten::copy_@590-700:0:");
  EXPECT_EQ(c.query_int("SELECT count(*) FROM op WHERE start >= 16000 AND start < 18000"), 0);
  // Step 4: each op keeps its place among the calls.
  EXPECT_EQ(c.query_text("SELECT group_concat(row, ' ') FROM (SELECT (o.start - 18000) || '-' || (o.\"end\" - 18000) "
                         "AS row FROM op o WHERE o.start >= 18000 ORDER BY o.start)"),
            "200-600 400-500 800-840 1180-1400");
  // Placed ops carry ids of their own, and the new steps' calls link to them.
  EXPECT_EQ(c.query_int("SELECT count(*) FROM op WHERE external_id >= " + std::to_string(store::kPlacedOpIdBase)), 8);
  EXPECT_EQ(c.query_text("SELECT group_concat(n.value, ' ') FROM (SELECT * FROM api_call ORDER BY start) a "
                         "JOIN external_correlation e ON e.pid = a.pid AND e.correlation = a.correlation "
                         "JOIN op o ON o.pid = a.pid AND o.external_id = e.external_id JOIN string n ON n.id = o.name_id "
                         "WHERE a.start >= 14000 AND a.start < 16000"),
            "aten::linear aten::addmm aten::copy_");
}

// A step that makes a recorded step's calls with others before or after them
// (a probe between blocks of steps, a logging copy every N steps) gets the
// recorded step's ops between the matching calls, and its own calls' kernels
// none; a step whose extra call falls among the recorded ones, or repeats
// their work, matches nothing.
TEST(PlaceOps, StepsWithCallsOfTheirOwnAroundARecordedStepsGetItsOps) {
  const std::string path = testing::fresh_temp_db("place_ops_extra");
  constexpr int kLaunches = 10;
  // kLaunches launches of "layer" 100 ns apart from t0 + 100 + offset, one op
  // around each; `before` probe launches first, `after` copies last, and
  // `middle` a probe launch after the fifth layer.
  auto step = [](test_support::RecordingBuilder& b, int64_t number, int64_t t0, bool ops, int before, int after,
                 bool middle) {
    b.step(number, t0, t0 + 10000);
    int64_t t = t0 + 10;
    auto probe = [&] {
      b.launch({.name = "cudaLaunchKernel", .start = t, .end = t + 5},
               {.start = t + 5, .end = t + 6, .name = "probe_kernel", .grid_x = 1});
      t += 20;
    };
    for (int i = 0; i < before; ++i) probe();
    t += 100;
    for (int i = 0; i < kLaunches; ++i) {
      if (ops) b.op({.name = "aten::layer", .start = t - 10, .end = t + 30, .external_id = number * 100 + i + 1});
      b.launch({.name = "cudaLaunchKernel", .start = t, .end = t + 20},
               {.start = t + 20, .end = t + 60, .name = "layer_kernel", .grid_x = 64});
      t += 100;
      if (middle && i == 4) probe();
    }
    for (int i = 0; i < after; ++i) {
      b.launch({.name = "cudaMemcpyAsync", .start = t, .end = t + 10}, store::MemcpyRow{.start = t + 10, .end = t + 20, .bytes = 4});
      t += 50;
    }
  };
  {
    test_support::RecordingBuilder b(path);
    b.meta("torch_op_steps", "1/5");
    b.at(5, 5);
    step(b, 0, 100000, true, 0, 0, false);
    step(b, 1, 110000, false, 0, 0, false);   // the recorded step's calls: placed as before
    step(b, 2, 120000, false, 30, 0, false);  // a probe of 30 launches first
    step(b, 3, 130000, false, 0, 1, false);   // a logging copy last
    step(b, 4, 140000, false, 0, 0, true);    // a probe launch among the layers: no match
    // One layer more: the extra call repeats the recorded step's own work (a
    // step of another kind that starts like the recorded one): no match.
    step(b, 5, 150000, false, 0, 0, false);
    b.launch({.name = "cudaLaunchKernel", .start = 151500, .end = 151520},
             {.start = 151520, .end = 151560, .name = "layer_kernel", .grid_x = 64});
  }
  const store::Finalized f = store::finalize_recording(path);
  EXPECT_EQ(f.placed.steps_placed, 3);
  EXPECT_EQ(f.placed.steps_unplaced, 2);
  EXPECT_EQ(f.placed.steps_with_extra_calls, 2);
  EXPECT_EQ(f.placed.ops, 3 * kLaunches);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  EXPECT_EQ(c.query_text("SELECT value FROM meta WHERE key = 'ops_placed_steps_with_extra_calls'"), "2");
  // Every layer kernel of steps 1-3 has its op, each op around its own launch;
  // no probe kernel and no copy has one.
  auto linked = [&](const std::string& kernel_or_copy, int64_t from, int64_t to) {
    return c.query_int("SELECT count(*) FROM " + kernel_or_copy + " k JOIN api_call a ON a.pid = k.pid AND "
                       "a.correlation = k.correlation JOIN external_correlation e ON e.pid = k.pid AND e.correlation = "
                       "k.correlation JOIN op o ON o.pid = k.pid AND o.external_id = e.external_id AND o.start <= a.start "
                       "AND o.\"end\" >= a.\"end\" WHERE k.start >= " + std::to_string(from) + " AND k.start < " +
                       std::to_string(to) + (kernel_or_copy == "kernel" ? " AND k.name_id = (SELECT id FROM string WHERE "
                       "value = 'layer_kernel')" : ""));
  };
  for (int64_t t0 : {110000, 120000, 130000}) EXPECT_EQ(linked("kernel", t0, t0 + 10000), kLaunches) << t0;
  EXPECT_EQ(c.query_int("SELECT count(*) FROM kernel k JOIN external_correlation e ON e.pid = k.pid AND "
                        "e.correlation = k.correlation JOIN string n ON n.id = k.name_id WHERE n.value = 'probe_kernel'"),
            0);
  EXPECT_EQ(linked("memcpy", 130000, 140000), 0);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM op WHERE start >= 140000"), 0);  // steps 4 and 5
  // Step 2's first op sits after the probe's last launch and before its first layer launch.
  const auto first_op = c.query_int("SELECT min(start) - 120000 FROM op WHERE start >= 120000 AND start < 130000");
  EXPECT_GT(first_op, 10 + 29 * 20 + 5);
  EXPECT_LT(first_op, 10 + 30 * 20 + 100);
}

// Every recorded step different (shapes that never repeat): the templates kept
// are capped, the oldest going first, so memory stays bounded.
TEST(PlaceOps, TheOldestTemplatesGoWhenTooManyStepsDiffer) {
  const std::string path = testing::fresh_temp_db("place_ops_cap");
  constexpr int kRecorded = 70;
  auto step = [](test_support::RecordingBuilder& b, int64_t number, int launches, bool ops) {
    const int64_t t0 = 10000 + number * 1000;
    b.step(number, t0, t0 + 1000);
    for (int i = 0; i < launches; ++i)
      b.api({.name = "cudaLaunchKernel", .start = t0 + 10 + 5 * i, .end = t0 + 12 + 5 * i,
             .correlation = b.next_correlation()});
    if (ops) b.op({.name = "aten::op", .start = t0 + 5, .end = t0 + 900, .external_id = number + 1});
  };
  {
    test_support::RecordingBuilder b(path);
    b.meta("torch_op_steps", "2/50");
    b.at(5, 5);
    for (int n = 0; n < kRecorded; ++n) step(b, n, n + 1, true);  // n + 1 launches: all different
    step(b, kRecorded, 1, false);             // like step 0, whose template is gone
    step(b, kRecorded + 1, kRecorded, false);  // like the last one
  }
  const store::Finalized f = store::finalize_recording(path);
  EXPECT_EQ(f.placed.steps_placed, 1);
  EXPECT_EQ(f.placed.steps_unplaced, 1);
}

TEST(PlaceOps, NothingIsPlacedUnlessTheRecordingSaysOpsWereRecordedInSomeStepsOnly) {
  const std::string path = testing::fresh_temp_db("place_ops_off");
  {
    test_support::RecordingBuilder b(path);
    b.at(5, 5);
    add_step(b, 0, 10000, true);
    add_step(b, 1, 12000, false);
  }
  const store::Finalized f = store::finalize_recording(path);
  EXPECT_EQ(f.placed.ops, 0);
  store::Connection c(path, store::Connection::Mode::kReadOnly);
  EXPECT_EQ(c.query_int("SELECT count(*) FROM op"), 4);
  EXPECT_FALSE(c.query_text("SELECT value FROM meta WHERE key = 'ops_placed'"));
}

TEST(PlaceOps, OnlyCallsThatCarryGpuWorkTakePartInMatching) {
  for (const char* name : {"cudaLaunchKernel", "cuLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync", "cuMemsetD32Async",
                           "cudaStreamWaitEvent"})
    EXPECT_TRUE(store::is_step_matching_call(name)) << name;
  for (const char* name : {"cudaMalloc", "cudaFree", "cudaGetDevice", "cuModuleGetFunction", "cudaEventQuery",
                           "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventRecord"})
    EXPECT_FALSE(store::is_step_matching_call(name)) << name;
}

// Real recordings from the H200 (ops in every step): ops of 3 steps in every 5
// are deleted and placed again. The kernels of those steps must get the op
// (name and shapes) they had, or none. On the 17 recordings: 34 485 of 34 658
// kernels get theirs back; the rest are in warm-up steps or steps whose
// shapes changed, which match no recorded step.
// Launches of a kernel no other step makes, put on the thread of step
// `step_start`'s first GPU call just before it, as a script's probe between
// blocks of steps does (real_models.py --threads). Returns whether they fit.
bool add_probe_before_first_gpu_call(store::Connection& c, int64_t pid, int64_t step_start, int64_t step_end,
                                     int launches, int64_t& next_correlation) {
  auto first = c.prepare(
      "SELECT a.tid AS tid, a.domain AS domain, a.cbid AS cbid, a.name_id AS name_id, a.start AS start "
      "FROM api_call a WHERE a.pid = ?1 AND a.start >= ?2 "
      "AND a.start < ?3 AND (EXISTS (SELECT 1 FROM kernel k WHERE k.pid = a.pid AND k.correlation = a.correlation) "
      "OR EXISTS (SELECT 1 FROM memcpy m WHERE m.pid = a.pid AND m.correlation = a.correlation) "
      "OR EXISTS (SELECT 1 FROM memset m WHERE m.pid = a.pid AND m.correlation = a.correlation)) "
      "ORDER BY a.start LIMIT 1");
  first.bind(1, pid);
  first.bind(2, step_start);
  first.bind(3, step_end);
  if (!first.step()) return false;
  const int64_t tid = first.int64("tid"), domain = first.int64("domain"), cbid = first.int64("cbid"),
                call_name = first.int64("name_id");
  const int64_t room = first.int64("start") - step_start - 2;
  if (room < 2 * launches) return false;
  using store::rec::Kernel;
  store::Cursor<Kernel> kernel_like(c, {Kernel::kDevice, Kernel::kContext, Kernel::kStream}, "WHERE pid = ?1 LIMIT 1");
  kernel_like.bind(1, pid);
  if (!kernel_like.next()) return false;
  const int64_t device = kernel_like->device, context = kernel_like->context, stream = kernel_like->stream;
  c.exec("INSERT OR IGNORE INTO string(id, value) SELECT max(id) + 1, 'gpuscope_test_probe' FROM string "
         "WHERE NOT EXISTS (SELECT 1 FROM string WHERE value = 'gpuscope_test_probe')");
  const int64_t probe_name = c.query_int("SELECT id FROM string WHERE value = 'gpuscope_test_probe'").value_or(0);
  auto call = c.prepare("INSERT INTO api_call(pid, tid, domain, cbid, name_id, start, \"end\", correlation, return_code) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0)");
  auto kernel = c.prepare("INSERT INTO kernel(pid, device, context, stream, correlation, start, \"end\", name_id, "
                          "grid_x, grid_y, grid_z, block_x, block_y, block_z) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, 1, 1, 32, 1, 1)");
  const int64_t spacing = room / launches;
  for (int j = 0; j < launches; ++j) {
    const int64_t t = step_start + 1 + j * spacing, corr = next_correlation++;
    for (auto [i, v] : std::initializer_list<std::pair<int, int64_t>>{
             {1, pid}, {2, tid}, {3, domain}, {4, cbid}, {5, call_name}, {6, t}, {7, t + spacing / 2}, {8, corr}})
      call.bind(i, v);
    call.run();
    for (auto [i, v] : std::initializer_list<std::pair<int, int64_t>>{
             {1, pid}, {2, device}, {3, context}, {4, stream}, {5, corr}, {6, t + spacing / 2}, {7, t + spacing / 2 + 1}, {8, probe_name}})
      kernel.bind(i, v);
    kernel.run();
  }
  return true;
}

// Every recording of tests/data with ops and 10 steps or more, its ops removed
// in 3 steps of every 5 and placed again: each kernel must get back the op it
// had, never another. With `probe` > 0, steps 3, 8, ... also start with that
// many launches of a kernel of their own (work no recorded step has, before
// the recorded step's calls): they must be placed all the same.
void check_real_recordings(int probe) {
  namespace fs = std::filesystem;
  constexpr const char* kSteps =
      "WITH s AS (SELECT pid, start, \"end\", row_number() OVER (PARTITION BY pid ORDER BY start) - 1 AS i FROM step) ";
  using Ops = std::map<std::pair<int64_t, int64_t>, std::string>;  // (pid, correlation) -> op name and shapes
  auto kernel_ops = [&](store::Connection& c) {
    auto st = c.prepare(std::string(kSteps) +
                        "SELECT k.pid AS pid, k.correlation AS correlation, "
                        "n.value || ' ' || coalesce(sh.value, '') AS op FROM kernel k "
                        "JOIN api_call a ON a.pid = k.pid AND a.correlation = k.correlation "
                        "JOIN s ON s.pid = a.pid AND s.i % 5 >= 2 AND a.start >= s.start AND a.start < s.\"end\" "
                        "JOIN external_correlation e ON e.pid = k.pid AND e.correlation = k.correlation "
                        "JOIN op o ON o.pid = k.pid AND o.external_id = e.external_id "
                        "JOIN string n ON n.id = o.name_id LEFT JOIN string sh ON sh.id = o.shapes_id "
                        "WHERE k.correlation != 0");
    Ops out;
    const int pid = st.column("pid"), correlation = st.column("correlation"), op = st.column("op");
    while (st.step()) out[{st.int64(pid), st.int64(correlation)}] = std::string(st.text(op));
    return out;
  };
  size_t recordings = 0, kernels = 0, same = 0, probed = 0;
  for (const auto& e : fs::directory_iterator(fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data")) {
    if (e.path().extension() != ".db") continue;
    SCOPED_TRACE(e.path().filename().string());
    const std::string copy = testing::fresh_temp_db("place_" + e.path().stem().string() + (probe ? "_probe" : ""));
    fs::copy_file(e.path(), copy, fs::copy_options::overwrite_existing);
    Ops before;
    int probes = 0;
    {
      store::Connection c(copy, store::Connection::Mode::kReadWrite);
      if (c.query_int("SELECT count(*) FROM step").value_or(0) < 10 || !c.query_int("SELECT 1 FROM op LIMIT 1")) continue;
      before = kernel_ops(c);
      c.exec(std::string(kSteps) +
             "DELETE FROM op WHERE EXISTS (SELECT 1 FROM s WHERE s.pid = op.pid AND s.i % 5 >= 2 "
             "AND op.start >= s.start AND op.start < s.\"end\")");
      c.exec("DELETE FROM external_correlation");
      c.exec("INSERT OR REPLACE INTO meta(key, value) VALUES ('torch_op_steps', '2/5')");
      if (probe > 0) {
        std::vector<std::tuple<int64_t, int64_t, int64_t>> steps;
        auto st = c.prepare(std::string(kSteps) + "SELECT pid, start, \"end\" FROM s WHERE i % 5 = 3");
        while (st.step()) steps.emplace_back(st.int64("pid"), st.int64("start"), st.int64("end"));
        int64_t correlation = int64_t{3} << 32;
        for (const auto& [pid, start, end] : steps)
          probes += add_probe_before_first_gpu_call(c, pid, start, end, probe, correlation);
      }
    }
    const store::Finalized f = store::finalize_recording(copy);
    EXPECT_GT(f.placed.steps_placed, 0);
    if (probes > 0) {
      EXPECT_GT(f.placed.steps_with_extra_calls, 0) << probes << " steps probed";
      ++probed;
    }
    store::Connection c(copy, store::Connection::Mode::kReadOnly);
    const Ops after = kernel_ops(c);
    size_t here = 0, wrong = 0;
    for (const auto& [key, op] : before) {
      auto it = after.find(key);
      here += it != after.end() && it->second == op;
      wrong += it != after.end() && it->second != op;
    }
    // A step is given ops only where its launches match a recorded step's, grid
    // for grid: never an op with other shapes (advisor_memory_pressure's batch
    // size changes between steps).
    EXPECT_EQ(wrong, 0u);
    // The probes' own kernels get none.
    EXPECT_EQ(c.query_int("SELECT count(*) FROM kernel k JOIN string s ON s.id = k.name_id JOIN external_correlation e "
                          "ON e.pid = k.pid AND e.correlation = k.correlation WHERE s.value = 'gpuscope_test_probe'"),
              0);
    // Within one recording most steps must match; a warm-up step may not.
    EXPECT_GE(here, before.size() * 8 / 10) << f.placed.steps_placed << " steps placed, " << f.placed.steps_unplaced
                                            << " not";
    kernels += before.size();
    same += here;
    ++recordings;
  }
  EXPECT_GE(recordings, 15u);
  if (probe > 0) {
    EXPECT_GE(probed, 15u);
  }
  EXPECT_GE(same, kernels * 99 / 100) << same << " of " << kernels << " kernels got their op back";
}

TEST(PlaceOps, KernelsOfRealRecordingsGetTheOpsTheyHad) { check_real_recordings(0); }

TEST(PlaceOps, RealStepsStartingWithAProbeOfTheirOwnGetTheirOpsToo) { check_real_recordings(4); }

}  // namespace
}  // namespace gpuscope
