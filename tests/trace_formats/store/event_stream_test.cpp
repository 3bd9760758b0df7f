// store::events hands each kind's rows to a visitor's method for that kind:
// visit_all in the order of events::Kinds with the before() hooks between
// kinds, rows in table order unless the visitor orders a kind, one process's
// or one id range's rows, a visit the visitor stops; a visitor that lacks a
// kind is no Visitor, and a visitor's declarations name a column added to a
// scratch schema.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/event_stream.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/scratch_schema.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

namespace events = store::events;
namespace rec = store::rec;

template <class R>
constexpr auto kEvery = [] {
  std::array<typename R::Column, R::kColumnCount> all{};
  for (int c = 0; c < R::kColumnCount; ++c) all[static_cast<size_t>(c)] = static_cast<typename R::Column>(c);
  return all;
}();

// Notes "<table> <pid>:<start or ts>" for each row and "before <table>" for each hook.
struct Recorder {
  template <class R>
  static events::Columns<R, kEvery<R>> columns(events::Tag<R>);
  static constexpr std::string_view order(events::Tag<rec::Step>) { return "start DESC"; }

  template <class R>
  void before(events::Tag<R>) {
    seen.push_back("before " + std::string(R::kTable));
  }
  template <class R>
  bool on(const R& row) {
    int64_t when = 0;
    if constexpr (requires { row.ts; }) when = row.ts;
    else when = row.start;
    seen.push_back(std::string(R::kTable) + " " + std::to_string(row.pid) + ":" + std::to_string(when));
    return --rows_left != 0;
  }
  std::vector<std::string> seen;
  int rows_left = -1;  // stops the scan when it reaches 0
};
static_assert(events::Visitor<Recorder>);

// Every kind but counters.
struct NoCounters {
  template <class R>
  static events::Columns<R, kEvery<R>> columns(events::Tag<R>);
  template <class R>
    requires(!std::is_same_v<R, rec::Counter>)
  void on(const R&) {}
};
static_assert(events::VisitsKind<NoCounters, rec::Kernel>);
static_assert(!events::VisitsKind<NoCounters, rec::Counter>);
static_assert(!events::Visitor<NoCounters>);

class EventStream : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::fresh_temp_db("event_stream");
    store::Writer w(path_);
    w.begin();
    // Kernels out of time order, so that table order shows.
    for (int64_t start : {30, 10, 20})
      w.add(store::KernelRow{.pid = start == 20 ? 2 : 1, .start = start, .end = start + 5, .name = "k"});
    w.add(store::OpRow{.pid = 1, .tid = 1, .name = "aten::mm", .start = 5, .end = 50});
    w.add(store::StepRow{.pid = 1, .number = 0, .start = 0, .end = 40});
    w.add(store::StepRow{.pid = 1, .number = 1, .start = 40, .end = 80});
    w.add(store::CounterRow{.pid = 1, .name = "sm_active_pct", .ts = 7, .value = 50});
    w.commit();
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + suffix);
  }
  std::string path_;
};

TEST_F(EventStream, VisitAllPassesTheKindsInOrderWithTheirHooks) {
  store::Reader r(path_);
  Recorder v;
  EXPECT_TRUE(events::visit_all(r.db(), v));
  EXPECT_EQ(v.seen, (std::vector<std::string>{"before step", "step 1:40", "step 1:0", "before op", "op 1:5",
                                              "before range", "before api_call", "before kernel", "kernel 1:30",
                                              "kernel 1:10", "kernel 2:20", "before memcpy", "before memset",
                                              "before sync", "before memory_event", "before counter", "counter 1:7"}));
}

TEST_F(EventStream, OneProcessOrOneIdRange) {
  store::Reader r(path_);
  Recorder one_pid;
  events::visit<rec::Kernel>(r.db(), one_pid, {.pid = 2});
  EXPECT_EQ(one_pid.seen, (std::vector<std::string>{"kernel 2:20"}));
  Recorder ids;
  events::visit<rec::Kernel>(r.db(), ids, {.ids = std::pair<int64_t, int64_t>{2, 3}});
  EXPECT_EQ(ids.seen, (std::vector<std::string>{"kernel 1:10", "kernel 2:20"}));
  Recorder both;
  events::visit<rec::Kernel>(r.db(), both, {.pid = 1, .ids = std::pair<int64_t, int64_t>{2, 3}});
  EXPECT_EQ(both.seen, (std::vector<std::string>{"kernel 1:10"}));
}

TEST_F(EventStream, AVisitorThatReturnsFalseStopsTheScan) {
  store::Reader r(path_);
  Recorder v;
  v.rows_left = 2;
  EXPECT_FALSE(events::visit_all(r.db(), v));
  EXPECT_EQ(v.seen, (std::vector<std::string>{"before step", "step 1:40", "step 1:0"}));
}

TEST(EventStreamColumns, AVisitorsDeclarationsNameAColumnAddedToAScratchSchema) {
  const std::vector<store::TableUse> uses = events::uses<Recorder>("recorder");
  ASSERT_EQ(uses.size(), 10u);
  EXPECT_EQ(uses.front().table, "step");
  EXPECT_EQ(store::uncovered(schema::tables(), uses), std::vector<std::string>{});
  testing::ScratchSchema scratch("memset", "pattern");
  EXPECT_EQ(store::uncovered(scratch.tables, uses),
            std::vector<std::string>{"recorder: memset.pattern neither handled nor left out"});
}

}  // namespace
}  // namespace gpuscope
