// The what-if advisor: builds the analysed steps' graph, checks that replaying
// it gives the job's step, prices every fix that applies, plans the best
// sequence of fixes, and re-prices the findings whose fix it can replay.
#pragma once

#include "analyzer/analysis.h"
#include "analyzer/context.h"

namespace gpuscope::analyzer::whatif {

// Fills a.whatif and corrects a.findings (after judge_against_untraced).
void advise(const Context& c, Analysis& a);

// The finding's rule id -> the fix the replay prices for it ("" when none).
std::string_view fix_of_rule(std::string_view rule_id);

}  // namespace gpuscope::analyzer::whatif
