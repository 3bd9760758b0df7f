#include "report/html.h"

#include "trace_formats/common/text.h"

namespace gpuscope::report {

std::string page_style(int max_width_px, std::string_view more_headings, std::string_view mono_selector) {
  std::string s = "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;margin:24px auto;max-width:" +
                  std::to_string(max_width_px) + "px;color:#222;padding:0 12px}\n";
  s += "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}";
  s += more_headings;
  s += "\ntable{border-collapse:collapse;margin:8px 0}"
       "td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}\n"
       "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}";
  s += mono_selector;
  s += "{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}\n";
  return s;
}

std::string page_start(const std::string& title_html, const std::string& style) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title_html + "</title>\n<style>\n" +
         style + "\n</style>\n</head>\n<body>\n<h1>" + title_html + "</h1>\n";
}

std::string page_end(const std::string& note_html) {
  return "<p class=\"note\">" + note_html + "</p>\n</body>\n</html>\n";
}

std::string td(const std::string& html, bool numeric) {
  return std::string(numeric ? "<td class=\"n\">" : "<td>") + html + "</td>";
}

std::string name_td(const std::string& name) { return "<td class=\"name\"><code>" + html_escape(name) + "</code></td>"; }

std::string html_table(const Columns& columns) {
  std::string o = "<table><tr>";
  for (const auto& c : columns) o += (c.kind == Column::kNumber ? "<th class=\"n\">" : "<th>") + c.title + "</th>";
  return o + "</tr>\n";
}

namespace {

template <class Cells>
std::string row(const Columns& columns, const Cells& cells) {
  std::string o = "<tr>";
  auto column = columns.begin();
  for (const auto& cell : cells) {
    const Column::Kind kind = column != columns.end() ? (column++)->kind : Column::kText;
    o += kind == Column::kName ? name_td(cell) : td(cell, kind == Column::kNumber);
  }
  return o + "</tr>\n";
}

}  // namespace

std::string html_row(const Columns& columns, std::initializer_list<std::string> cells) { return row(columns, cells); }
std::string html_row(const Columns& columns, const std::vector<std::string>& cells) { return row(columns, cells); }

std::string html_list(const std::vector<std::string>& lines) {
  std::string o = "<ul>\n";
  for (const auto& line : lines) o += "<li>" + html_escape(line) + "</li>\n";
  return o + "</ul>\n";
}

std::string html_notes(const std::vector<std::string>& notes) {
  return notes.empty() ? std::string() : "<h2>Notes</h2>\n" + html_list(notes);
}

}  // namespace gpuscope::report
