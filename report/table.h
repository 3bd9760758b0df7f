// A report table's columns, declared once per table: the heading and what the
// cells hold. The HTML and Markdown writers take their alignment from it, so a
// heading and its cells cannot disagree.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::report {

struct Column {
  enum Kind {
    kText,
    kNumber,  // right-aligned: class "n" in HTML, "---:" in Markdown
    kName,    // a recorded name: in HTML escaped, in <code>, wrapped anywhere (name_td)
  };
  std::string title;  // markup in HTML; "" leaves the heading blank
  Kind kind = kText;
};
using Columns = std::vector<Column>;

}  // namespace gpuscope::report
