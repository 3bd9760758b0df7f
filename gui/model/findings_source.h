// The analyzer's findings for the findings panel. Built only against
// gs_analyzer when that target exists (GPUSCOPE_HAVE_ANALYZER); otherwise the
// panel says so.
#pragma once

#include <string>
#include <vector>

#include "model/timeline_data.h"

namespace gpuscope::gui {

struct FindingsResult {
  std::vector<FindingItem> findings;
  std::string status;  // empty when the analysis ran; else why there are none
};

bool have_analyzer();
// Runs the analyzer on `database` (slow for big recordings: call it off the GUI thread).
FindingsResult analyze_findings(const std::string& database);

}  // namespace gpuscope::gui
