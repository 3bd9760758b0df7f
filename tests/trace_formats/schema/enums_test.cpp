// schema/enums.h: the one declaration of the schema's enums, against the
// `enum` table that schema.cpp and every recording derive from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace_formats/schema/enums.h"
#include "trace_formats/schema/schema.h"
#include "trace_formats/store/cursor.h"
#include "trace_formats/store/reader.h"
#include "trace_formats/store/writer.h"
#include "tests/trace_formats/store/temp_db.h"

namespace gpuscope {
namespace {

struct Declared {
  std::string_view type;
  std::string_view (*name)(int64_t);
  std::optional<int64_t> (*parse)(std::string_view);
};

#define GPUSCOPE_DECLARED(T, LIST)                                  \
  Declared{#T, &schema::T::name, [](std::string_view text) {        \
             const auto code = schema::T::parse(text);              \
             return code ? std::optional<int64_t>(*code) : std::nullopt; \
           }},
const std::vector<Declared> kDeclared = {GPUSCOPE_SCHEMA_ENUMS(GPUSCOPE_DECLARED)};
#undef GPUSCOPE_DECLARED

const Declared* declared(std::string_view type) {
  for (const Declared& d : kDeclared)
    if (d.type == type) return &d;
  return nullptr;
}

TEST(Enums, EveryEnumRowIsADeclaredNameBothWays) {
  ASSERT_FALSE(schema::enum_values().empty());
  for (const schema::EnumValue& e : schema::enum_values()) {
    SCOPED_TRACE(std::string(e.type) + " " + std::string(e.name));
    const Declared* d = declared(e.type);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->name(e.value), e.name);
    EXPECT_EQ(d->parse(e.name), std::optional<int64_t>(e.value));
  }
  EXPECT_EQ(schema::copy_kind::name(schema::copy_kind::PtoP), "PtoP");
  EXPECT_EQ(schema::range_source::name(0), "");
  EXPECT_EQ(schema::range_source::parse("torch"), std::nullopt);
}

// Columns whose doc names an enum name a declared one.
TEST(Enums, EveryEnumAColumnNamesIsDeclared) {
  int columns = 0;
  for (const schema::Table& t : schema::tables()) {
    for (const schema::Column& c : t.columns) {
      const size_t at = c.doc.find("num `");
      if (at == std::string_view::npos) continue;
      const std::string_view rest = c.doc.substr(at + 5);
      const std::string_view type = rest.substr(0, rest.find('`'));
      EXPECT_NE(declared(type), nullptr) << t.name << "." << c.name << " names enum " << type;
      ++columns;
    }
  }
  EXPECT_GE(columns, 13);
}

// A new recording's `enum` table holds the declared rows, no more, no less.
TEST(Enums, ARecordingCarriesTheDeclaredRows) {
  const std::string path = testing::fresh_temp_db("enums");
  { store::Writer w(path); }
  {
    store::Reader r(path);
    store::Cursor<store::rec::Enum> st = store::Cursor<store::rec::Enum>::all(r.db(), "ORDER BY rowid");
    size_t i = 0;
    const auto rows = schema::enum_values();
    while (st.next()) {
      ASSERT_LT(i, rows.size());
      EXPECT_EQ(st->type, rows[i].type);
      EXPECT_EQ(st->value, rows[i].value);
      EXPECT_EQ(st->name, rows[i].name);
      ++i;
    }
    EXPECT_EQ(i, rows.size());
  }
  std::filesystem::remove(path);
}

// op.scope's values are not in the `enum` table but in its doc, which must
// list the declared ones.
TEST(Enums, OpScopeDocListsTheDeclaredScopes) {
  std::string listed;
#define GPUSCOPE_LISTED(T, name, value)                                    \
  {                                                                        \
    std::string words = #name;                                             \
    std::replace(words.begin(), words.end(), '_', ' ');                    \
    listed += (listed.empty() ? "" : ", ") + std::to_string(value) + " " + words; \
  }
  GPUSCOPE_ENUM_OP_SCOPE(GPUSCOPE_LISTED, op_scope)
#undef GPUSCOPE_LISTED
  const schema::Table* op = schema::find_table("op");
  ASSERT_NE(op, nullptr);
  std::string_view doc;
  for (const schema::Column& c : op->columns)
    if (c.name == "scope") doc = c.doc;
  EXPECT_NE(doc.find("(" + listed + ")"), std::string_view::npos) << doc << "\n" << listed;
}

}  // namespace
}  // namespace gpuscope
