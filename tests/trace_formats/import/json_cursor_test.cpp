// The tokenizer under the importer: exact times, strings, strictness, and the
// NeedMore protocol that lets it stream.
#include <gtest/gtest.h>

#include <limits>
#include <optional>

#include "trace_formats/import/json_cursor.h"

namespace gpuscope::formats::json {
namespace {

int64_t ns(const char* text) {
  Number n;
  n.text = text;
  n.is_integer = std::string_view(text).find_first_of(".eE") == std::string_view::npos;
  return n.us_to_ns();
}

TEST(JsonCursor, MicrosecondsToNanosecondsIsExact) {
  EXPECT_EQ(ns("0"), 0);
  EXPECT_EQ(ns("1.5"), 1500);
  EXPECT_EQ(ns("1.123"), 1123);
  EXPECT_EQ(ns("123456789012.345"), 123456789012345);
  EXPECT_EQ(ns("1669990000123456"), 1669990000123456000);  // absolute epoch µs (old Kineto)
  EXPECT_EQ(ns("-2.25"), -2250);
  EXPECT_EQ(ns("0.0005"), 1);   // rounds half up on the 4th decimal
  EXPECT_EQ(ns("0.0004"), 0);
  EXPECT_EQ(ns("1e3"), 1000000);
  EXPECT_EQ(ns("2.5E-3"), 3);
}

// Parses `text` as Cursor::number() does and applies `f` while the text lives.
template <class F> auto with_number(const char* text, F f) {
  std::string buf = std::string(text) + " ";
  Cursor c(buf.data(), buf.data() + buf.size(), true, 0);
  return f(c.number());
}
double as_double(const char* text) {
  return with_number(text, [](const Number& n) { return n.to_double(); });
}
std::optional<int64_t> as_int(const char* text) {
  return with_number(text, [](const Number& n) { return n.to_int64_checked(); });
}

TEST(JsonCursor, NumbersBeyondTheRangesAreToldApart) {
  EXPECT_EQ(as_double("1e999"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(as_double("-1e999"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(as_double("1e-999"), 0.0);
  EXPECT_EQ(as_double("1e300"), 1e300);
  EXPECT_EQ(as_int("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(as_int("-9223372036854775807"), -INT64_MAX);
  EXPECT_EQ(as_int("12.75"), 12);
  EXPECT_EQ(as_int("18446744073709551616"), std::nullopt);
  EXPECT_EQ(as_int("9223372036854775808"), std::nullopt);
  EXPECT_EQ(as_int("1e300"), std::nullopt);
  EXPECT_EQ(as_int("-1e19"), std::nullopt);
  // to_int64 still saturates, for the args that keep a clamped value.
  EXPECT_EQ(with_number("18446744073709551616", [](const Number& n) { return n.to_int64(); }), INT64_MAX);
}

std::string decode(const std::string& json) {
  std::string buf = json + " ";
  Cursor c(buf.data(), buf.data() + buf.size(), true, 0);
  Scratch s;
  return std::string(c.string(s));
}

TEST(JsonCursor, DecodesEscapes) {
  EXPECT_EQ(decode(R"("plain")"), "plain");
  EXPECT_EQ(decode(R"("q\"b\\s\/n\nt\t")"), "q\"b\\s/n\nt\t");
  EXPECT_EQ(decode(R"("\u00e9")"), "\xc3\xa9");
  EXPECT_EQ(decode(R"("\ud83d\ude00")"), "\xf0\x9f\x98\x80");
  EXPECT_EQ(decode(R"("lone \ud800 x")"), "lone \xef\xbf\xbd x");  // U+FFFD
  // Raw bytes pass through: the importer stores names as recorded.
  EXPECT_EQ(decode("\"\xff\x01\""), "\xff\x01");
}

bool skips(const std::string& json, bool strict) {
  std::string buf = json + " ";
  Cursor c(buf.data(), buf.data() + buf.size(), true, 0);
  if (strict) c.set_strict();
  try {
    c.skip_value();
    return true;
  } catch (const SyntaxError&) {
    return false;
  }
}

TEST(JsonCursor, SkipValidates) {
  EXPECT_TRUE(skips(R"({"a": [1, 2.5e3, -0, true, false, null, {"b": "c"}]})", true));
  EXPECT_FALSE(skips("[1,]", true));
  EXPECT_FALSE(skips(R"({"a" 1})", true));
  EXPECT_FALSE(skips(R"({"a": 1,})", true));
  EXPECT_FALSE(skips(R"(["\x"])", true));
  EXPECT_FALSE(skips("[01x]", true));
  EXPECT_FALSE(skips("tru", true));
  // Bare N/A and NaN appear in real torch traces: accepted unless strict.
  EXPECT_TRUE(skips(R"({"bw": N/A, "x": NaN, "y": -Infinity})", false));
  EXPECT_FALSE(skips(R"({"bw": N/A})", true));
}

TEST(JsonCursor, DepthIsLimited) {
  std::string deep(Cursor::kMaxDepth + 10, '[');
  deep += std::string(Cursor::kMaxDepth + 10, ']');
  EXPECT_FALSE(skips(deep, false));
  std::string ok(100, '[');
  ok += std::string(100, ']');
  EXPECT_TRUE(skips(ok, false));
}

TEST(JsonCursor, AsksForMoreAtTheWindowEnd) {
  for (std::string partial : {R"({"a": "abc)", R"({"a": 12)", R"({"a": tr)", R"({"a": "x\)", "{", R"(["\u00)"}) {
    Cursor c(partial.data(), partial.data() + partial.size(), false, 0);
    EXPECT_THROW(c.skip_value(), NeedMore) << partial;
    Cursor last(partial.data(), partial.data() + partial.size(), true, 0);
    EXPECT_THROW(last.skip_value(), SyntaxError) << partial;
  }
}

TEST(JsonCursor, ReportsTheOffset) {
  std::string text = R"({"a": [1, 2, }])";
  Cursor c(text.data(), text.data() + text.size(), true, 1000);
  try {
    c.skip_value();
    FAIL() << "accepted invalid JSON";
  } catch (const SyntaxError& e) {
    EXPECT_EQ(e.offset, 1000u + text.find('}'));
  }
}

}  // namespace
}  // namespace gpuscope::formats::json
