// report/html.h, markdown.h, svg.h and json.h: the pieces of a report page.
// The composed styles and pages are held byte for byte by the reports' goldens;
// here each piece is checked on its own, recorded text escaped included.
#include <gtest/gtest.h>

#include "report/html.h"
#include "report/json.h"
#include "report/markdown.h"
#include "report/svg.h"

namespace gpuscope::report {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ReportHtml, StyleOpensWithTheSharedRules) {
  const std::string s = page_style(1000, "h3{font-size:15px}", "code,pre");
  EXPECT_EQ(count(s, "\n"), 4);
  EXPECT_EQ(s.rfind("body{", 0), 0u);
  EXPECT_NE(s.find("max-width:1000px;"), std::string::npos);
  EXPECT_NE(s.find("border-bottom:1px solid #ddd}h3{font-size:15px}\n"), std::string::npos);
  EXPECT_NE(s.find("tabular-nums}code,pre{font:12px/1.4 ui-monospace"), std::string::npos);
  EXPECT_EQ(s.substr(s.size() - 1), "\n");
}

TEST(ReportHtml, PageAroundTheBody) {
  const std::string start = page_start("T &amp; U", "S");
  EXPECT_EQ(start.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n", 0), 0u);
  EXPECT_NE(start.find("<title>T &amp; U</title>\n<style>\nS\n</style>\n</head>\n<body>\n<h1>T &amp; U</h1>\n"), std::string::npos);
  EXPECT_EQ(page_end("Report schema x."), "<p class=\"note\">Report schema x.</p>\n</body>\n</html>\n");
}

TEST(ReportHtml, CellsAndListsEscapeRecordedText) {
  EXPECT_EQ(td("<b>1</b>"), "<td><b>1</b></td>");  // markup already
  EXPECT_EQ(td("1", true), "<td class=\"n\">1</td>");
  EXPECT_EQ(name_td("k<T>&"), "<td class=\"name\"><code>k&lt;T&gt;&amp;</code></td>");
  EXPECT_EQ(html_list({"a<b", "c"}), "<ul>\n<li>a&lt;b</li>\n<li>c</li>\n</ul>\n");
  EXPECT_EQ(html_notes({}), "");
  EXPECT_EQ(html_notes({"n"}), "<h2>Notes</h2>\n<ul>\n<li>n</li>\n</ul>\n");
}

TEST(ReportTable, ColumnsAlignHeadingsAndCells) {
  using enum Column::Kind;
  const Columns columns{{"kernel", kName}, {"origin"}, {"ms", kNumber}};
  EXPECT_EQ(html_table(columns), "<table><tr><th>kernel</th><th>origin</th><th class=\"n\">ms</th></tr>\n");
  EXPECT_EQ(html_row(columns, {"k<1>", "<b>x</b>", "2.0"}),
            "<tr><td class=\"name\"><code>k&lt;1&gt;</code></td><td><b>x</b></td><td class=\"n\">2.0</td></tr>\n");
  EXPECT_EQ(markdown_table(columns), "| kernel | origin | ms |\n|---|---|---:|\n");
  EXPECT_EQ(markdown_table({{""}, {"base", kNumber}}), "| | base |\n|---|---:|\n");  // a blank label column
}

TEST(ReportMarkdown, RowsNamesAndLists) {
  EXPECT_EQ(markdown_row({"a", "b"}), "| a | b |\n");
  EXPECT_EQ(markdown_row({"a", ""}), "| a |  |\n");  // an empty recorded value keeps its cell
  EXPECT_EQ(markdown_name("a|b<script>", 100), "a\\|b&lt;script&gt;");
  EXPECT_EQ(markdown_name("abcdefghij", 5), "abcde...");  // cut after 5 code points
  EXPECT_EQ(markdown_list({"x_y", "z"}), "- x\\_y\n- z\n");
}

TEST(ReportSvg, FrameAndAxes) {
  const Frame f{900, 200, 60, 20, 16, 28};
  EXPECT_EQ(svg_open(f, "a<b", true), "<svg width=\"900\" height=\"200\" viewBox=\"0 0 900 200\" role=\"img\" aria-label=\"a&lt;b\">\n");
  EXPECT_EQ(svg_open(f, "t", false), "<svg width=\"900\" height=\"200\" role=\"img\" aria-label=\"t\">\n");
  const std::string y = y_axis(f, 40, "ms");
  EXPECT_EQ(count(y, "class=\"grid\""), 5);
  EXPECT_NE(y.find("<line x1=\"60\" x2=\"880\" y1=\"172.0\" y2=\"172.0\" class=\"grid\"/>"), std::string::npos);  // the zero line
  EXPECT_NE(y.find(">40</text>"), std::string::npos);
  EXPECT_NE(y.find("<text x=\"4\" y=\"12\" class=\"axis\">ms</text>"), std::string::npos);
  const Frame g{960, 150, 60, 20, 10, 30};
  const std::string x = x_axis(g, 10, 20, "ms");
  EXPECT_EQ(count(x, "class=\"grid\""), 6);
  EXPECT_NE(x.find("<line class=\"grid\" x1=\"60.0\" y1=\"10\" x2=\"60.0\" y2=\"120\"/>"), std::string::npos);
  EXPECT_NE(x.find("<text class=\"axis\" x=\"940.0\" y=\"138\" text-anchor=\"middle\">20.00 ms</text>"), std::string::npos);
  EXPECT_DOUBLE_EQ(x_at(g, 10, 20, 15), 500);
}

TEST(ReportJson, TextReplacesInvalidUtf8) {
  nlohmann::ordered_json j;
  j["b"] = 1;
  j["a"] = std::string("x\xff");
  EXPECT_EQ(json_text(j), "{\n  \"b\": 1,\n  \"a\": \"x\xef\xbf\xbd\"\n}\n");
}

}  // namespace
}  // namespace gpuscope::report
