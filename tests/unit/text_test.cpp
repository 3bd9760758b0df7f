// common/text.h: recorded names hold any byte, and every output format gets
// valid UTF-8 escaped its own way; sizes use one set of units everywhere.
#include "common/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuscope {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidSequencesPass) {
  for (std::string s : {"", "plain ascii", "caf\xC3\xA9", "\xE2\x82\xAC euro", "\xF0\x9F\x98\x80 emoji",
                        "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF" /* U+10FFFF */, "\xED\x9F\xBF" /* U+D7FF */}) {
    EXPECT_TRUE(is_valid_utf8(s)) << s;
    EXPECT_EQ(valid_utf8(s), s);
  }
  EXPECT_TRUE(is_valid_utf8(std::string("nul\0inside", 10)));
}

TEST(Utf8, OverlongFormsAreReplaced) {
  EXPECT_EQ(valid_utf8("\xC0\xAF"), kFffd + kFffd);  // '/' in two bytes
  EXPECT_EQ(valid_utf8("\xC1\xBF"), kFffd + kFffd);
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), kFffd + kFffd + kFffd);
  EXPECT_EQ(valid_utf8("\xF0\x80\x80\xAF"), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(utf8_sequence_length("\xE0\xA0\x80", 0), 3u);  // U+0800, the first three-byte one
  EXPECT_EQ(utf8_sequence_length("\xF0\x90\x80\x80", 0), 4u);
}

TEST(Utf8, SurrogatesAndPastTheLastCodePointAreReplaced) {
  EXPECT_EQ(valid_utf8("a\xED\xA0\x80z"), "a" + kFffd + kFffd + kFffd + "z");  // U+D800
  EXPECT_EQ(valid_utf8("\xED\xBF\xBF"), kFffd + kFffd + kFffd);               // U+DFFF
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);   // U+110000
  EXPECT_EQ(valid_utf8("\xF5\x80\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));
}

TEST(Utf8, TruncatedAndStrayBytesAreReplaced) {
  EXPECT_EQ(valid_utf8("ab\xE2\x82"), "ab" + kFffd + kFffd);  // cut short by the end
  EXPECT_EQ(valid_utf8("\xE2\x82z"), kFffd + kFffd + "z");    // cut short by an ASCII byte
  EXPECT_EQ(valid_utf8("\xF0\x9F\x98"), kFffd + kFffd + kFffd);
  EXPECT_EQ(valid_utf8("\x80x\xBF"), kFffd + "x" + kFffd);  // continuation bytes alone
  EXPECT_EQ(valid_utf8("\xFF\xFE"), kFffd + kFffd);
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_EQ(utf8_sequence_length("\xC3", 0), 0u);
}

TEST(Utf8, EncodesCodePoints) {
  std::string out;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F600u}) append_utf8(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

TEST(Terminal, ControlBytesAreShownAsHex) {
  EXPECT_EQ(terminal_safe("evil\x1b]0;pwned\x07"), "evil\\x1b]0;pwned\\x07");
  EXPECT_EQ(terminal_safe(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  EXPECT_EQ(terminal_safe("line\nnext\t"), "line\\x0anext\\x09");
  EXPECT_EQ(terminal_safe("line\nnext\t", true), "line\nnext\t");
  EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xff"), "caf\xc3\xa9 \xff");  // not a control: left to the UTF-8 layer
}

TEST(Terminal, PlainTextReplacesControlsAndCutsByCodePoint) {
  EXPECT_EQ(plain_text("a\x1b[31mb\x7f\n"), "a?[31mb??");
  EXPECT_EQ(plain_text("\xFF ok"), kFffd + " ok");
  EXPECT_EQ(plain_text("caf\xC3\xA9s", 4), "caf\xC3\xA9...");  // é is one of the four
  EXPECT_EQ(plain_text("abcd", 4), "abcd");                    // exactly `max`: no mark
  EXPECT_EQ(plain_text("abcde", 0), "...");
}

TEST(Html, EscapesEachSpecialCharacter) {
  EXPECT_EQ(html_escape("&"), "&amp;");
  EXPECT_EQ(html_escape("<"), "&lt;");
  EXPECT_EQ(html_escape(">"), "&gt;");
  EXPECT_EQ(html_escape("\""), "&quot;");
  EXPECT_EQ(html_escape("'"), "&#39;");
  EXPECT_EQ(html_escape("<script>alert(\"x\")</script>"), "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
  EXPECT_EQ(html_escape("&amp;"), "&amp;amp;");  // text, never markup
}

TEST(Html, KeepsOnlyWhatXmlAllows) {
  EXPECT_EQ(html_escape("a\x01\x1b\x7f" "b"), "a&#xFFFD;&#xFFFD;&#xFFFD;b");
  EXPECT_EQ(html_escape(std::string("\0", 1)), "&#xFFFD;");
  EXPECT_EQ(html_escape("\r"), "&#xFFFD;");
  EXPECT_EQ(html_escape("\xEF\xBF\xBE\xEF\xBF\xBF"), "&#xFFFD;&#xFFFD;");  // U+FFFE, U+FFFF
  EXPECT_EQ(html_escape("\xEF\xBF\xBD"), kFffd);                         // U+FFFD itself stays
  EXPECT_EQ(html_escape("\xFF\xFE end"), kFffd + kFffd + " end");
  EXPECT_EQ(html_escape("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Html, NewlinesAndTabsInAttributesAreReferences) {
  EXPECT_EQ(html_escape("a\nb\tc"), "a\nb\tc");
  EXPECT_EQ(html_escape("a\nb\tc", true), "a&#10;b&#9;c");
  EXPECT_EQ(html_escape("x'y", true), "x&#39;y");
}

TEST(Markdown, EscapesEachSpecialCharacter) {
  EXPECT_EQ(markdown_escape("|"), "\\|");
  EXPECT_EQ(markdown_escape("`"), "\\`");
  EXPECT_EQ(markdown_escape("*"), "\\*");
  EXPECT_EQ(markdown_escape("_"), "\\_");
  EXPECT_EQ(markdown_escape("["), "\\[");
  EXPECT_EQ(markdown_escape("]"), "\\]");
  EXPECT_EQ(markdown_escape("\\"), "\\\\");
  EXPECT_EQ(markdown_escape("~"), "\\~");
  EXPECT_EQ(markdown_escape("<"), "&lt;");
  EXPECT_EQ(markdown_escape(">"), "&gt;");
  EXPECT_EQ(markdown_escape("a & b #1!"), "a & b #1!");
  EXPECT_EQ(markdown_escape("user_kernel<|pipe|`tick`*star*>"),
            "user\\_kernel&lt;\\|pipe\\|\\`tick\\`\\*star\\*&gt;");
}

TEST(Markdown, NamesStayOnOneLineAndValid) {
  EXPECT_EQ(markdown_escape("two\nlines\x1b"), "two?lines?");
  EXPECT_EQ(markdown_escape("\xC0\xAF"), kFffd + kFffd);
}

std::string json(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

TEST(Json, EscapesEachSpecialCharacter) {
  EXPECT_EQ(json("plain"), "\"plain\"");
  EXPECT_EQ(json("\""), "\"\\\"\"");
  EXPECT_EQ(json("\\"), "\"\\\\\"");
  EXPECT_EQ(json("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(json(std::string("\0\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  EXPECT_EQ(json("\x7f"), "\"\x7f\"");  // JSON allows DEL raw
  EXPECT_EQ(json("</script>"), "\"</script>\"");
}

TEST(Json, InvalidUtf8BecomesReplacement) {
  EXPECT_EQ(json("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  EXPECT_EQ(json("a\xFF" "b"), "\"a" + kFffd + "b\"");
  EXPECT_EQ(json("\xED\xA0\x80"), "\"" + kFffd + kFffd + kFffd + "\"");
}

TEST(Units, FixedNeverShowsMinusZero) {
  EXPECT_EQ(format_fixed(1.23456, 3), "1.235");
  EXPECT_EQ(format_fixed(-0.0001, 3), "0.000");
  EXPECT_EQ(format_fixed(-1.5, 1), "-1.5");
  EXPECT_EQ(format_fixed(std::nan(""), 2), "n/a");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 2), "n/a");
}

TEST(Units, Percent) {
  EXPECT_EQ(format_percent(0.1234), "12.3 %");
  EXPECT_EQ(format_percent(1), "100.0 %");
  EXPECT_EQ(format_percent(0.5, 0), "50 %");
  EXPECT_EQ(format_percent(-0.00001), "0.0 %");
}

TEST(Units, BytesUseDecimalUnitsWithOneSpelling) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(999), "999 B");
  EXPECT_EQ(format_bytes(1000), "1.0 kB");
  EXPECT_EQ(format_bytes(1024), "1.0 kB");
  EXPECT_EQ(format_bytes(16'100), "16.1 kB");
  EXPECT_EQ(format_bytes(999'900), "999.9 kB");
  EXPECT_EQ(format_bytes(1'000'000), "1.0 MB");
  EXPECT_EQ(format_bytes(8'388'608), "8.4 MB");
  EXPECT_EQ(format_bytes(1e9), "1.00 GB");
  EXPECT_EQ(format_bytes(1.5e9), "1.50 GB");
  EXPECT_EQ(format_bytes(2e12), "2.00 TB");
  EXPECT_EQ(format_bytes(3e15), "3.00 PB");
  EXPECT_EQ(format_bytes(4e18), "4000.00 PB");  // the last unit grows
}

TEST(Units, BytesPickTheUnitAfterRounding) {
  EXPECT_EQ(format_bytes(999.4), "999 B");
  EXPECT_EQ(format_bytes(999.6), "1.0 kB");
  EXPECT_EQ(format_bytes(999'960), "1.0 MB");
  EXPECT_EQ(format_bytes(999'996'000), "1.00 GB");
}

TEST(Units, NegativeBytesKeepTheirSign) {
  EXPECT_EQ(format_bytes(-512), "-512 B");
  EXPECT_EQ(format_bytes(-1.5e6), "-1.5 MB");
  EXPECT_EQ(format_bytes(-0.2), "0 B");
  EXPECT_EQ(format_bytes(std::nan("")), "n/a");
}

}  // namespace
}  // namespace gpuscope
