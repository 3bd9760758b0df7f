// store/schema_check: a recording missing a table or a column of the schema is
// refused when a Reader opens it, in one line naming the file and what is
// missing, without SQL text; a whole recording opens.
#include <gtest/gtest.h>

#include <string>

#include "trace_formats/common/error.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/schema_check.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope::store {
namespace {

std::string refusal(const std::string& path) {
  try {
    Reader r(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string recording(const std::string& name) {
  const std::string path = testing::fresh_temp_db(name);
  { Writer w(path); }
  return path;
}

TEST(SchemaCheck, AWholeRecordingOpens) {
  const std::string path = recording("schema_check_whole");
  EXPECT_EQ(refusal(path), "");
}

TEST(SchemaCheck, ADroppedTableIsNamed) {
  const std::string path = recording("schema_check_table");
  Connection(path, Connection::Mode::kReadWrite).exec("DROP TABLE kernel; DROP TABLE op;");
  const std::string why = refusal(path);
  EXPECT_EQ(why.rfind(path + ": damaged recording: tables kernel, op missing", 0), 0u) << why;
  EXPECT_EQ(why.find("SELECT"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
}

TEST(SchemaCheck, ADroppedColumnIsNamed) {
  const std::string path = recording("schema_check_column");
  Connection(path, Connection::Mode::kReadWrite).exec("ALTER TABLE step DROP COLUMN number;");
  const std::string why = refusal(path);
  EXPECT_EQ(why.rfind(path + ": damaged recording: column step.number missing", 0), 0u) << why;
}

}  // namespace
}  // namespace gpuscope::store
