// The HTML page both report families write: one self-contained file, inline
// CSS and SVG, no script and nothing fetched. Arguments named `html` are
// markup already; every other string is escaped here.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "report/table.h"

namespace gpuscope::report {

// The rules every report's style opens with, four lines: the page a centred
// column `max_width_px` wide, the h1 and h2 headings (then `more_headings`),
// bordered tables whose "n" cells are right-aligned numbers, and the
// monospace font on the elements `mono_selector` names. Each report appends
// its own rules, among them `.name` (name_td) and `.note` (page_end), whose
// place in the style differs between the reports' committed pages.
std::string page_style(int max_width_px, std::string_view more_headings, std::string_view mono_selector);

// From <!DOCTYPE html> to the page's heading; `title_html` is both the
// document's <title> and its <h1>.
std::string page_start(const std::string& title_html, const std::string& style);
// The closing note (class "note") and the end of the page.
std::string page_end(const std::string& note_html);

std::string td(const std::string& html, bool numeric = false);  // numeric: class "n", right-aligned
std::string name_td(const std::string& name);                   // a recorded name: escaped, in <code>, wrapped anywhere

// "<table>" and the heading row; the caller closes the table with "</table>\n".
std::string html_table(const Columns& columns);
// One row, each cell in the <td> of its column's kind; cells are markup, but
// those of name columns are recorded text, escaped here.
std::string html_row(const Columns& columns, std::initializer_list<std::string> cells);
std::string html_row(const Columns& columns, const std::vector<std::string>& cells);

// Each line escaped in a <ul>.
std::string html_list(const std::vector<std::string>& lines);
// "<h2>Notes</h2>" and the notes as a list; "" when there are none.
std::string html_notes(const std::vector<std::string>& notes);

}  // namespace gpuscope::report
