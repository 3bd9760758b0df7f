#include "report/markdown.h"

#include "trace_formats/common/text.h"

namespace gpuscope::report {

std::string markdown_table(const Columns& columns) {
  std::string head = "|", rule = "|";
  for (const auto& c : columns) {
    head += c.title.empty() ? " |" : " " + c.title + " |";
    rule += c.kind == Column::kNumber ? "---:|" : "---|";
  }
  return head + "\n" + rule + "\n";
}

namespace {

template <class Cells>
std::string row(const Cells& cells) {
  std::string o = "|";
  for (const auto& c : cells) o += " " + c + " |";
  return o + "\n";
}

}  // namespace

std::string markdown_row(std::initializer_list<std::string> cells) { return row(cells); }
std::string markdown_row(const std::vector<std::string>& cells) { return row(cells); }

std::string markdown_name(std::string_view name, size_t max_chars) { return markdown_escape(plain_text(name, max_chars)); }

std::string markdown_list(const std::vector<std::string>& lines) {
  std::string o;
  for (const auto& line : lines) o += "- " + markdown_escape(line) + "\n";
  return o;
}

}  // namespace gpuscope::report
