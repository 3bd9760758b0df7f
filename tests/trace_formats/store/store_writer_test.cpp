// store::Writer stages rows of auto-id tables and writes them with multi-row
// INSERTs, skipping binds whose value did not change (store/row_batch.h).
// These tests check that what lands in the file is exactly what was added, in
// order, whatever the batch boundaries, and that a killed writer leaves a
// database that passes integrity_check.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

using store::kNull;

std::string temp_db(const std::string& name) { return testing::fresh_temp_db("store_" + name); }

void remove_db(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Row i of a pattern that changes some columns every row, some every few rows,
// and switches nullable columns between NULL and values, so that batches of
// 64 rows see both repeated and changed parameters at every position.
store::KernelRow kernel(int64_t i, int64_t name_id) {
  store::KernelRow k;
  k.pid = 4242;
  k.device = i % 3;
  k.context = 1;
  k.stream = 7 + i % 5;
  k.correlation = 2 * i + 1;
  k.start = 1000 * i;
  k.end = 1000 * i + 500 + i % 7;
  k.name_id = name_id;
  k.grid_x = (i / 64) % 2 ? 1024 : 1;  // changes from one batch to the next
  k.grid_y = 1;
  k.grid_z = i == 100 ? INT64_MAX : 1;
  k.block_x = 256;
  k.block_y = i % 65 == 0 ? -1 : 1;
  k.block_z = 1;
  k.registers = 32 + i % 64;  // same value at the same place in every batch
  k.static_smem = 0;
  k.dynamic_smem = i % 128 < 64 ? 0 : 4096;
  k.graph_id = (i / 64) % 3 == 1 ? kNull : 9;
  k.graph_node_id = i % 2 ? kNull : i;
  return k;
}

std::string expected_kernel_line(int64_t id, const store::KernelRow& k) {
  auto v = [](int64_t x) { return x == kNull ? std::string("NULL") : std::to_string(x); };
  std::string s = std::to_string(id);
  for (int64_t x : {k.pid, k.device, k.context, k.stream, k.correlation, k.start, k.end, k.name_id, k.grid_x,
                    k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z, k.registers, k.static_smem,
                    k.dynamic_smem, k.graph_id, k.graph_node_id})
    s += "|" + v(x);
  return s;
}

// Every kernel row as "id|col|col|...", NULL spelled out and integers checked
// to be stored as integers.
std::vector<std::string> kernel_lines(store::Connection& db) {
  store::Statement st = db.prepare("SELECT * FROM kernel ORDER BY id");
  std::vector<std::string> out;
  while (st.step()) {
    std::string s;
    for (int c = 0; c < st.column_count(); ++c) {
      if (c) s += "|";
      int type = sqlite3_column_type(st.raw(), c);
      if (type == SQLITE_NULL) {
        s += "NULL";
      } else {
        EXPECT_EQ(type, SQLITE_INTEGER) << "column " << c;
        s += std::to_string(st.int64(c));
      }
    }
    out.push_back(s);
  }
  return out;
}

TEST(StoreWriter, BatchedKernelRowsKeepOrderAndValues) {
  std::string path = temp_db("kernel_order");
  std::vector<std::string> expected;
  {
    store::Writer w(path);
    int64_t name_a = 0, i = 0;
    // Transactions of sizes around the 64-row statement, and a remainder
    // that needs every smaller statement (127 = 64 + 32 + 16 + 8 + 4 + 2 + 1).
    for (int n : {1, 63, 64, 65, 127, 200, 0, 3}) {
      w.begin();
      if (!name_a) name_a = w.intern("kernel_a");
      for (int r = 0; r < n; ++r, ++i) {
        store::KernelRow k = kernel(i, name_a + i % 2);
        if (i % 2) {
          k.name = "kernel_b";  // interned by the writer while staging
          k.name_id = -1;
        }
        w.add(k);
        store::KernelRow stored = k;
        stored.name_id = i % 2 ? w.intern("kernel_b") : name_a;
        expected.push_back(expected_kernel_line(i + 1, stored));
      }
      w.commit();
    }
    EXPECT_EQ(w.rows_written(), i);
  }
  store::Reader r(path);
  EXPECT_EQ(kernel_lines(r.db()), expected);
  remove_db(path);
}

TEST(StoreWriter, InterleavedTablesEachKeepTheirOrder) {
  std::string path = temp_db("interleaved");
  {
    store::Writer w(path);
    w.begin();
    for (int64_t i = 0; i < 150; ++i) {
      store::MemcpyRow m;
      m.pid = 1;
      m.correlation = i;
      m.bytes = i * 10;
      w.add(m);
      if (i % 3 == 0) {
        store::StepRow s;
        s.pid = 1;
        s.number = i / 3;
        s.start = i;
        s.end = i + 1;
        w.add(s);
      }
    }
    w.commit();
  }
  store::Reader r(path);
  EXPECT_EQ(r.count("memcpy"), 150);
  EXPECT_EQ(r.count("step"), 50);
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM memcpy WHERE correlation != id - 1 OR bytes != 10 * (id - 1)"), 0);
  EXPECT_EQ(r.db().query_int("SELECT count(*) FROM step WHERE number != id - 1 OR start != 3 * (id - 1)"), 0);
  remove_db(path);
}

TEST(StoreWriter, TextAndRealsAreCopiedWhenStaged) {
  std::string path = temp_db("text");
  std::vector<std::string> texts;
  {
    store::Writer w(path);
    w.begin();
    for (int i = 0; i < 200; ++i) {
      // Texts of the same size at the same place in consecutive batches; in
      // the second batch a long text moves the staging buffer before those
      // rows are written. Also an empty text and one holding a NUL.
      std::string text = i == 64 + 10 ? std::string(100'000, 'x')
                         : i == 7     ? std::string()
                         : i == 8     ? std::string("nul\0inside", 10)
                                      : "message " + std::to_string(i % 64) + static_cast<char>('a' + i / 64);
      texts.push_back(text);
      store::MessageRow m;
      m.ts = i;
      m.text = text;
      w.add(m);
      text.assign(text.size(), '#');  // the caller's buffer changes after add()
      store::CounterRow c;
      c.pid = 1;
      c.device = i % 2 ? kNull : 0;
      c.name = "gpu_memory_used";
      c.ts = i;
      c.value = i % 64 == 0 ? 0.1 : 1e300 * (i % 2 ? -1 : 1);
      w.add(c);
    }
    w.commit();
  }
  store::Reader r(path);
  using store::rec::Counter;
  using store::rec::Message;
  store::Cursor<Message> st(r.db(), {Message::kTs, Message::kText}, "ORDER BY id");
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(st.next());
    EXPECT_EQ(st->ts, static_cast<int64_t>(i));
    EXPECT_EQ(st->text, texts[i]) << "row " << i;
  }
  EXPECT_FALSE(st.next());
  store::Cursor<Counter> cs(r.db(), {Counter::kTs, Counter::kDevice, Counter::kValue}, "ORDER BY id");
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(cs.next());
    EXPECT_EQ(cs->ts, i);
    EXPECT_EQ(cs->null(Counter::kDevice), i % 2 == 1);
    EXPECT_EQ(cs->value, i % 64 == 0 ? 0.1 : 1e300 * (i % 2 ? -1 : 1));
  }
  remove_db(path);
}

TEST(StoreWriter, RowsOutsideATransactionAreWrittenAtOnce) {
  std::string path = temp_db("autocommit");
  store::Writer w(path);
  store::KernelRow k = kernel(0, 1);
  w.add(k);
  store::Reader r(path);  // another connection sees committed rows only
  EXPECT_EQ(r.count("kernel"), 1);
  remove_db(path);
}

TEST(StoreWriter, QueriesInTheTransactionSeeStagedRows) {
  std::string path = temp_db("visible");
  store::Writer w(path);
  w.begin();
  for (int i = 0; i < 10; ++i) w.add(kernel(i, 1));
  EXPECT_EQ(w.connection().query_int("SELECT count(*) FROM kernel"), 10);
  w.commit();
  remove_db(path);
}

TEST(StoreWriter, PutAfterAddKeepsTheTablesOrder) {
  std::string path = temp_db("put");
  {
    store::Writer w(path);
    w.begin();
    for (int64_t n : {1, 2, 3}) {
      store::StepRow s;
      s.number = n;
      if (n == 2)
        w.put(s);
      else
        w.add(s);
    }
    w.commit();
  }
  store::Reader r(path);
  EXPECT_EQ(r.db().query_int("SELECT group_concat(number, '') FROM (SELECT number FROM step ORDER BY id)"), 123);
  remove_db(path);
}

// A row struct whose field count does not match its table.
template <int kFields>
struct WrongKernel {
  static constexpr std::string_view kTable = "kernel";
  template <class F> void fields(F&& f) const {
    for (int i = 0; i < kFields; ++i) f(int64_t{i});
  }
};

TEST(StoreWriter, RowOfTheWrongWidthIsRefusedAndTheBatchGoesOn) {
  std::string path = temp_db("width");
  {
    store::Writer w(path);
    w.begin();
    w.add(kernel(0, 1));
    EXPECT_THROW(w.add(WrongKernel<3>{}), Error);
    w.add(kernel(1, 1));
    // Wide enough to overrun the staging buffer of a full batch.
    for (int i = 2; i < 63; ++i) w.add(kernel(i, 1));
    EXPECT_THROW(w.add(WrongKernel<5000>{}), Error);
    w.add(kernel(63, 1));
    w.add(kernel(64, 1));
    w.commit();
    EXPECT_EQ(w.rows_written(), 65);
  }
  store::Reader r(path);
  std::vector<std::string> lines = kernel_lines(r.db());
  ASSERT_EQ(lines.size(), 65u);
  for (int i = 0; i < 65; ++i) EXPECT_EQ(lines[static_cast<size_t>(i)], expected_kernel_line(i + 1, kernel(i, 1)));
  remove_db(path);
}

TEST(StoreWriter, KilledWriterLeavesAnIntactDatabase) {
  std::string path = temp_db("killed");
  constexpr int kRowsPerCommit = 100'000;  // 5 MB: more than the page cache, so pages spill before COMMIT
  {
    store::Writer w(path);  // schema in place before the child starts
  }
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Writes like the collector (one transaction per tick) until killed.
    try {
      store::Writer w(path);
      for (int64_t i = 0;;) {
        w.begin();
        for (int r = 0; r < kRowsPerCommit; ++r, ++i) w.add(kernel(i, 1));
        w.commit();
      }
    } catch (...) {
    }
    _exit(1);
  }
  store::Reader r(path);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // Kill it in the middle of its work: after a few commits.
  while (r.count("kernel") < 3 * kRowsPerCommit && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself";
  store::Connection db(path, store::Connection::Mode::kReadWrite);
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  int64_t rows = db.query_int("SELECT count(*) FROM kernel").value_or(-1);
  EXPECT_GE(rows, 3 * kRowsPerCommit);
  EXPECT_EQ(rows % kRowsPerCommit, 0) << "a transaction was half written";
  EXPECT_EQ(db.query_int("SELECT max(id) FROM kernel"), rows);
  remove_db(path);
}

}  // namespace
}  // namespace gpuscope
