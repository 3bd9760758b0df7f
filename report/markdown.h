// Markdown for the reports' pull-request comments and wiki pages: table rows
// and lists. Cells are Markdown already: recorded text goes through
// markdown_escape (common/text.h) or markdown_name first.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "report/table.h"

namespace gpuscope::report {

// The heading row and the alignment row: "| a | b |\n|---|---:|\n"; a blank
// title reads "| |".
std::string markdown_table(const Columns& columns);
// "| a | b |\n". An empty cell keeps its two spaces, as a recorded value
// that is empty always has.
std::string markdown_row(std::initializer_list<std::string> cells);
std::string markdown_row(const std::vector<std::string>& cells);
// A recorded name (kernel, op, host, file) as table-safe text cut to
// `max_chars` code points. Not a code span: that would keep "<script>" and
// table pipes literally.
std::string markdown_name(std::string_view name, size_t max_chars);
// "- line\n" for each line, escaped.
std::string markdown_list(const std::vector<std::string>& lines);

}  // namespace gpuscope::report
