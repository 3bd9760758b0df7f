// The analyzer's findings for the findings panel. Built only against
// gs_analyzer when that target exists (GPUSCOPE_HAVE_ANALYZER); otherwise the
// panel says so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

struct FindingsResult {
  std::vector<FindingItem> findings;
  std::vector<RankItem> ranks;  // by rank; empty unless several processes carry a rank
  std::string status;  // empty when the analysis ran; else why there are none
  // The analysed steps (ns since origin; 0, 0 when the analysis did not run)
  // of the analysed process: where the viewer opens.
  int64_t pid = -1;
  int64_t analysed_start_ns = 0, analysed_end_ns = 0;
  // The report's plan (what-if replay), one line each as `analyze` prints it;
  // empty when there is none.
  std::vector<std::string> plan;
};

bool have_analyzer();
// Runs the analyzer on `database` (slow for big recordings: call it off the GUI thread).
FindingsResult analyze_findings(const std::string& database);

// The rank the straggler finding names, -1 without one: the rank group the
// viewer marks.
int64_t straggler_rank(const FindingsResult& f);

// The rank an evidence label names ("rank 2: step 7, 31000 us"), -1 if none.
// The analyzer's time ranges say which rank they belong to only in their label.
int64_t rank_in_label(std::string_view label);

}  // namespace gpuscope::gui
