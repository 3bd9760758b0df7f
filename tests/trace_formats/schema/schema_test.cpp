#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "trace_formats/schema/schema.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

std::string temp_db(const std::string& name) { return testing::fresh_temp_db(name); }

TEST(Schema, DocsPageMatchesTheCode) {
  std::string path = std::string(GPUSCOPE_SOURCE_DIR) + "/docs/schema.md";
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string expected = schema::markdown();
  if (ss.str() != expected) {
    std::ofstream(path + ".actual") << expected;
    FAIL() << "docs/schema.md is stale; regenerate with `gpuscope schema --markdown > docs/schema.md` (wrote "
           << path << ".actual)";
  }
}

// Tools that rewrite recordings (`gpuscope merge` shifts times, renumbers
// strings and pids) find those columns by their declared type: a column whose
// doc says it holds such a value must be declared so, and the other way round.
TEST(Schema, TimeStringAndPidColumnsAreDeclaredAsSuch) {
  int times = 0;
  for (const schema::Table& t : schema::tables()) {
    for (const schema::Column& c : t.columns) {
      SCOPED_TRACE(std::string(t.name) + "." + std::string(c.name));
      const bool says_time = c.doc.find("ns since origin") != std::string_view::npos;
      const bool says_string = c.doc.find("(string.id)") != std::string_view::npos;
      const bool says_pid = c.name == "pid" || c.name.ends_with("_pid");
      EXPECT_EQ(c.type == schema::ColumnType::kTime, says_time);
      EXPECT_EQ(c.type == schema::ColumnType::kStringId, says_string);
      EXPECT_EQ(c.type == schema::ColumnType::kPid, says_pid);
      if (c.name == "start" || c.name == "end" || c.name == "ts") {
        EXPECT_EQ(c.type, schema::ColumnType::kTime);
      }
      times += c.type == schema::ColumnType::kTime;
    }
  }
  EXPECT_GE(times, 23);
}

TEST(Schema, EveryRowStructMatchesItsTable) {
  std::string path = temp_db("rows");
  store::Writer w(path);
  w.begin();
  w.add(store::KernelRow{});
  w.add(store::MemcpyRow{});
  w.add(store::MemsetRow{});
  w.add(store::ApiCallRow{});
  w.add(store::SyncRow{});
  w.add(store::MemoryEventRow{});
  w.add(store::GraphLaunchRow{});
  w.add(store::RangeRow{});
  w.add(store::OpRow{});
  w.add(store::ExternalCorrelationRow{});
  w.add(store::StepRow{});
  w.add(store::CounterRow{});
  w.add(store::MessageRow{});
  w.put(store::ProcessRow{});
  w.put(store::ThreadRow{});
  w.put(store::DeviceRow{});
  w.commit();
  EXPECT_EQ(w.rows_written(), 16);
  std::filesystem::remove(path);
}

TEST(Schema, ReaderRefusesNewerSchema) {
  std::string path = temp_db("newer");
  {
    store::Writer w(path);
    w.begin();
    w.set_meta("schema_version", std::to_string(schema::kVersion + 1));
    w.commit();
  }
  try {
    store::Reader r(path);
    FAIL() << "opened a newer schema";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("newer gpuscope"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(Schema, ReaderRefusesWhatIsNotARecording) {
  std::string empty = temp_db("empty");
  std::ofstream(empty).close();
  EXPECT_THROW(store::Reader r(empty), Error);
  std::string text = temp_db("text");
  std::ofstream(text) << "hello, not sqlite\n";
  try {
    store::Reader r(text);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a gpuscope recording"), std::string::npos) << e.what();
  }
  std::string other = temp_db("other");
  {
    store::Connection c(other, store::Connection::Mode::kCreate);
    c.exec("CREATE TABLE t(x)");
  }
  EXPECT_THROW(store::Reader r(other), Error);
  EXPECT_THROW(store::Writer w(other), Error);
  EXPECT_THROW(store::Reader r("/nonexistent/x.db"), Error);
  for (auto& p : {empty, text, other}) std::filesystem::remove(p);
}

TEST(Schema, StringsAreInternedOnceAcrossWriters) {
  std::string path = temp_db("intern");
  {
    store::Writer a(path), b(path);
    a.begin();
    int64_t id1 = a.intern("aten::mm");
    a.commit();
    b.begin();
    int64_t id2 = b.intern("aten::mm");
    int64_t id3 = b.intern("other");
    b.commit();
    EXPECT_EQ(id1, id2);
    EXPECT_NE(id1, id3);
  }
  store::Reader r(path);
  EXPECT_EQ(r.count("string"), 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpuscope
