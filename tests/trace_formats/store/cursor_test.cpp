// store::Cursor reads the named columns of a table into its generated record
// (trace_formats/store/records.h), NULL as kNull with the column's null bit,
// NULL for a column the file's schema version predates; Statement::column
// finds ad-hoc result columns by name; store::uncovered names every column a
// consumer's declared use forgets, on a scratch copy of the schema with a
// column added.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/coverage.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/temp_db.h"
#include "tests/trace_formats/store/scratch_schema.h"

namespace gpuscope {
namespace {

using store::kNull;
using store::rec::Kernel;

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

std::string two_kernels() {
  const std::string path = testing::fresh_temp_db("cursor_kernels");
  store::Writer w(path);
  w.begin();
  for (int i = 0; i < 2; ++i) {
    store::KernelRow k;
    k.pid = 7;
    k.stream = 3 + i;
    k.start = 100 * i;
    k.end = 100 * i + 40;
    k.name = i ? "gemm" : "relu";
    k.name_id = -1;
    k.graph_id = i ? 9 : kNull;
    w.add(k);
  }
  w.commit();
  return path;
}

TEST(Cursor, ReadsTheNamedColumnsIntoTheRecord) {
  const std::string path = two_kernels();
  store::Reader r(path);
  store::Cursor<Kernel> k(r.db(), {Kernel::kStream, Kernel::kEnd, Kernel::kGraphId, Kernel::kNameId},
                          "WHERE pid=?1 ORDER BY id");
  k.bind(1, int64_t{7});
  std::vector<std::string> seen;
  while (k.next()) {
    seen.push_back(std::to_string(k->stream) + " " + std::to_string(k->end) + " " +
                   (k->null(Kernel::kGraphId) ? "null" : std::to_string(k->graph_id)) + " " +
                   std::string(r.str(k->name_id)));
    EXPECT_EQ(k->start, 0) << "a column not named keeps its default";
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"3 40 null relu", "4 140 9 gemm"}));
  EXPECT_FALSE(store::Cursor<Kernel>(r.db(), {Kernel::kPid}, "WHERE pid=8").next());
  remove_db(path);
}

TEST(Cursor, AllColumnsAndAnAliasForJoins) {
  const std::string path = two_kernels();
  store::Reader r(path);
  auto all = store::Cursor<Kernel>::all(r.db(), "ORDER BY id");
  ASSERT_TRUE(all.next());
  EXPECT_EQ(all->id, 1);
  EXPECT_EQ(all->graph_id, kNull);
  EXPECT_TRUE(all->null(Kernel::kGraphNodeId));
  store::Cursor<Kernel> joined(r.db(), {Kernel::kPid, Kernel::kStart}, "JOIN string s ON s.id = k.name_id WHERE s.value = 'gemm'",
                               "k");
  ASSERT_TRUE(joined.next());
  EXPECT_EQ(joined->start, 100);
  EXPECT_FALSE(joined.next());
  remove_db(path);
}

// Columns fixed at compile time read what the run-time Cursor reads.
constexpr Kernel::Column kSelected[] = {Kernel::kStream, Kernel::kEnd, Kernel::kGraphId};

TEST(Select, ReadsWhatTheCursorReads) {
  const std::string path = two_kernels();
  store::Reader r(path);
  store::SelectOf<Kernel, kSelected> s(r.db(), "WHERE pid=?1 ORDER BY id");
  s.bind(1, int64_t{7});
  store::Cursor<Kernel> c(r.db(), kSelected, "WHERE pid=7 ORDER BY id");
  int rows = 0;
  while (s.next()) {
    ASSERT_TRUE(c.next());
    EXPECT_EQ(s->stream, c->stream);
    EXPECT_EQ(s->end, c->end);
    EXPECT_EQ(s->graph_id, c->graph_id);
    EXPECT_EQ(s->nulls, c->nulls);
    EXPECT_EQ(s->start, 0) << "a column not named keeps its default";
    ++rows;
  }
  EXPECT_FALSE(c.next());
  EXPECT_EQ(rows, 2);
  store::Select<Kernel, Kernel::kGraphId> g(r.db(), "ORDER BY id");
  ASSERT_TRUE(g.next());
  EXPECT_TRUE(g->null(Kernel::kGraphId));
  EXPECT_EQ(g->graph_id, kNull);
  ASSERT_TRUE(g.next());
  EXPECT_EQ(g->graph_id, 9);
  EXPECT_FALSE(g->null(Kernel::kGraphId));
  remove_db(path);
}

TEST(Cursor, AColumnTheFilesSchemaPredatesReadsNull) {
  const std::string path = testing::fresh_temp_db("cursor_v1");
  {
    store::Connection db(path, store::Connection::Mode::kCreate);
    db.exec("CREATE TABLE sync (id INTEGER, pid INTEGER, start INTEGER); INSERT INTO sync VALUES (1, 5, 10);");
  }
  store::Connection db(path, store::Connection::Mode::kReadOnly);
  using store::rec::Sync;
  store::Cursor<Sync> s(db, {Sync::kPid, Sync::kWaitStream});
  ASSERT_TRUE(s.next());
  EXPECT_EQ(s->pid, 5);
  EXPECT_EQ(s->wait_stream, kNull);
  EXPECT_TRUE(s->null(Sync::kWaitStream));
  remove_db(path);
}

TEST(Statement, ResultColumnsByName) {
  const std::string path = two_kernels();
  store::Reader r(path);
  auto q = r.query("SELECT count(*) AS n, max(\"end\") AS last FROM kernel");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.int64("n"), 2);
  EXPECT_EQ(q.column("last"), 1);
  EXPECT_EQ(q.int64(q.column("last")), 140);
  EXPECT_THROW(q.column("missing"), Error);
  remove_db(path);
}

TEST(Coverage, CoversIsTrueOnlyWhenEveryColumnIsNamedOnce) {
  using store::rec::Thread;
  constexpr Thread::Column kAll[] = {Thread::kPid, Thread::kTid, Thread::kName};
  constexpr Thread::Column kTwo[] = {Thread::kPid, Thread::kTid};
  constexpr Thread::Column kName[] = {Thread::kName};
  constexpr Thread::Column kNone[] = {Thread::kPid};
  static_assert(store::covers<Thread>(kAll, {}));
  static_assert(store::covers<Thread>(kTwo, kName));
  static_assert(!store::covers<Thread>(kTwo, {}));
  static_assert(!store::covers<Thread>(kAll, kNone));
}

using testing::ScratchSchema;

TEST(Coverage, AColumnAddedToAScratchSchemaIsNamedForTheConsumerThatForgetsIt) {
  using store::rec::Thread;
  constexpr Thread::Column kHandled[] = {Thread::kPid, Thread::kTid};
  constexpr Thread::Column kLeftOut[] = {Thread::kName};
  const std::vector<store::TableUse> uses{store::table_use<Thread>("viewer", kHandled, kLeftOut)};
  EXPECT_TRUE(store::uncovered(schema::tables(), uses).empty());
  ScratchSchema scratch("thread", "priority");
  EXPECT_EQ(store::uncovered(scratch.tables, uses),
            (std::vector<std::string>{"viewer: thread.priority neither handled nor left out"}));
  const std::vector<store::TableUse> bad{{"exporter", "thread", {"pid", "tid", "nmae"}, {}}};
  EXPECT_EQ(store::uncovered(schema::tables(), bad),
            (std::vector<std::string>{"exporter: thread.name neither handled nor left out",
                                      "exporter: thread.nmae is not a column of the table"}));
}

}  // namespace
}  // namespace gpuscope
