// common/text.h: recorded names hold any byte, and every output format gets
// valid UTF-8 escaped its own way; sizes use one set of units everywhere.
#include "trace_formats/common/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>

namespace gpuscope {
namespace {

// Each input through `f`, compared with what it must give.
using Cases = std::initializer_list<std::pair<std::string, std::string>>;
template <class F>
void expect_each(F f, Cases cases) {
  for (const auto& [in, want] : cases) EXPECT_EQ(f(in), want) << "input: " << terminal_safe(in);
}

std::string r(int n) {  // n replacement characters
  std::string s;
  for (int i = 0; i < n; ++i) s += "\xEF\xBF\xBD";
  return s;
}

TEST(Utf8, ValidSequencesPass) {
  for (std::string s : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC euro", "\xF0\x9F\x98\x80 emoji",
                        "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF" /* U+10FFFF */, "\xED\x9F\xBF" /* U+D7FF */}) {
    EXPECT_TRUE(is_valid_utf8(s)) << s;
    EXPECT_EQ(valid_utf8(s), s);
  }
  EXPECT_TRUE(is_valid_utf8(std::string("nul\0inside", 10)));
  EXPECT_EQ(utf8_sequence_length("\xE0\xA0\x80", 0), 3u);  // U+0800, the first three-byte one
  EXPECT_EQ(utf8_sequence_length("\xF0\x90\x80\x80", 0), 4u);
}

TEST(Utf8, InvalidSequencesAreReplacedByteByByte) {
  auto f = [](const std::string& s) { return valid_utf8(s); };
  expect_each(f, {{"\xC0\xAF", r(2)}, {"\xC1\xBF", r(2)}, {"\xE0\x80\xAF", r(3)}, {"\xF0\x80\x80\xAF", r(4)}});  // overlong
  expect_each(f, {{"a\xED\xA0\x80z", "a" + r(3) + "z"}, {"\xED\xBF\xBF", r(3)},      // surrogates
                  {"\xF4\x90\x80\x80", r(4)}, {"\xF5\x80\x80\x80", r(4)}});          // past U+10FFFF
  expect_each(f, {{"ab\xE2\x82", "ab" + r(2)}, {"\xE2\x82z", r(2) + "z"}, {"\xF0\x9F\x98", r(3)},  // truncated
                  {"\x80x\xBF", r(1) + "x" + r(1)}, {"\xFF\xFE", r(2)}});                         // stray
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_EQ(utf8_sequence_length("\xC3", 0), 0u);
}

TEST(Utf8, EncodesCodePoints) {
  std::string out;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F600u}) append_utf8(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST(Terminal, ControlBytesAreShownAsHex) {
  expect_each([](const std::string& s) { return terminal_safe(s); },
              {{"evil\x1b]0;pwned\x07", "evil\\x1b]0;pwned\\x07"}, {std::string("a\0b\x7f", 4), "a\\x00b\\x7f"},
               {"line\nnext\t", "line\\x0anext\\x09"},
               {"caf\xc3\xa9 \xff", "caf\xc3\xa9 \xff"}});  // not a control: left to the UTF-8 layer
  EXPECT_EQ(terminal_safe("line\nnext\t", true), "line\nnext\t");
}

TEST(Terminal, PlainTextReplacesControlsAndCutsByCodePoint) {
  EXPECT_EQ(plain_text("a\x1b[31mb\x7f\n"), "a?[31mb??");
  EXPECT_EQ(plain_text("\xFF ok"), r(1) + " ok");
  EXPECT_EQ(plain_text("caf\xC3\xA9s", 4), "caf\xC3\xA9...");  // é is one of the four
  EXPECT_EQ(plain_text("abcd", 4), "abcd");                    // exactly `max`: no mark
  EXPECT_EQ(plain_text("abcde", 0), "...");
}

TEST(Html, EscapesEachSpecialCharacter) {
  auto f = [](const std::string& s) { return html_escape(s); };
  expect_each(f, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}, {"&amp;", "&amp;amp;"}});
  expect_each(f, {{"<script>alert(\"x\")</script>", "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"}});
}

TEST(Html, KeepsOnlyWhatXmlAllows) {
  auto f = [](const std::string& s) { return html_escape(s); };
  expect_each(f, {{"a\x01\x1b\x7f" "b", "a&#xFFFD;&#xFFFD;&#xFFFD;b"}, {std::string("\0", 1), "&#xFFFD;"},
                  {"\r", "&#xFFFD;"}, {"\xEF\xBF\xBE\xEF\xBF\xBF", "&#xFFFD;&#xFFFD;"} /* U+FFFE, U+FFFF */});
  expect_each(f, {{r(1), r(1)}, {"\xFF\xFE end", r(2) + " end"}, {"caf\xC3\xA9", "caf\xC3\xA9"}});
}

TEST(Html, NewlinesAndTabsInAttributesAreReferences) {
  EXPECT_EQ(html_escape("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(html_escape("a\nb\tc", true), "a&#10;b&#9;c");
  EXPECT_EQ(html_escape("x'y", true), "x&#39;y");
}

TEST(Markdown, EscapesEachSpecialCharacter) {
  auto f = [](const std::string& s) { return markdown_escape(s); };
  expect_each(f, {{"|", "\\|"}, {"`", "\\`"}, {"*", "\\*"}, {"_", "\\_"}, {"[", "\\["}, {"]", "\\]"}, {"\\", "\\\\"},
                  {"~", "\\~"}, {"<", "&lt;"}, {">", "&gt;"}, {"a & b #1!", "a & b #1!"}});
  expect_each(f, {{"user_kernel<|pipe|`tick`*star*>", "user\\_kernel&lt;\\|pipe\\|\\`tick\\`\\*star\\*&gt;"},
                  {"two\nlines\x1b", "two?lines?"}, {"\xC0\xAF", r(2)}});  // one line, valid UTF-8
}

TEST(Json, EscapesEachSpecialCharacterAndInvalidUtf8) {
  auto f = [](const std::string& s) {
    std::string out;
    append_json_string(out, s);
    return out;
  };
  expect_each(f, {{"plain", "\"plain\""}, {"\"", "\"\\\"\""}, {"\\", "\"\\\\\""}, {"\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\""},
                  {std::string("\0\x01\x1f", 3), "\"\\u0000\\u0001\\u001f\""}, {"\x7f", "\"\x7f\""} /* allowed raw */});
  expect_each(f, {{"caf\xC3\xA9", "\"caf\xC3\xA9\""}, {"a\xFF" "b", "\"a" + r(1) + "b\""}, {"\xED\xA0\x80", "\"" + r(3) + "\""}});
}

TEST(Units, FixedAndPercent) {
  struct Case {
    double v;
    int decimals;
    std::string fixed, percent;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& c : {Case{1.23456, 3, "1.235", "123.456 %"}, Case{-0.0001, 3, "0.000", "-0.010 %"},  // never "-0.000"
                        Case{-1.5, 1, "-1.5", "-150.0 %"}, Case{0.5, 0, "0", "50 %"}, Case{-0.00001, 1, "0.0", "0.0 %"},
                        Case{std::nan(""), 2, "n/a", "n/a"}, Case{inf, 2, "n/a", "n/a"}}) {
    EXPECT_EQ(format_fixed(c.v, c.decimals), c.fixed) << c.v;
    EXPECT_EQ(format_percent(c.v, c.decimals), c.percent) << c.v;
  }
  EXPECT_EQ(format_percent(0.1234), "12.3 %");  // one decimal unless told
}

TEST(Units, BytesUseDecimalUnitsWithOneSpelling) {
  for (const auto& [in, want] : std::initializer_list<std::pair<double, std::string>>{
           {0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {1024, "1.0 kB"}, {16'100, "16.1 kB"}, {999'900, "999.9 kB"},
           {1e6, "1.0 MB"}, {8'388'608, "8.4 MB"}, {1e9, "1.00 GB"}, {1.5e9, "1.50 GB"}, {2e12, "2.00 TB"},
           {3e15, "3.00 PB"}, {4e18, "4000.00 PB"} /* the last unit grows */,
           {999.4, "999 B"}, {999.6, "1.0 kB"}, {999'960, "1.0 MB"}, {999'996'000, "1.00 GB"} /* unit after rounding */,
           {-512, "-512 B"}, {-1.5e6, "-1.5 MB"}, {-0.2, "0 B"}, {std::nan(""), "n/a"}})
    EXPECT_EQ(format_bytes(in), want) << in;
}

}  // namespace
}  // namespace gpuscope
