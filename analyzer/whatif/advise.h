// The what-if advisor: builds the analysed steps' graph, checks that replaying
// it gives the job's step, prices every fix that applies, plans the best
// sequence of fixes, and re-prices the findings whose fix it can replay.
#pragma once

#include <string>
#include <vector>

#include "analyzer/result.h"
#include "analyzer/context.h"
#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/fixes.h"
#include "analyzer/whatif/step_graph.h"

namespace gpuscope::analyzer::whatif {

// Fills a.whatif (with `asked`: --what-if's combinations) and corrects
// a.findings (after judge_against_untraced).
void advise(const Context& c, Analysis& a, const std::vector<std::vector<std::string>>& asked = {});

// Every fix priced alone on `base` (the graph with tracing's cost taken off),
// then the plan: apply the fix that gives the shortest step, replay, choose
// again. Steps are anchored to `job_ms` (times job_ms over base's replay);
// `margin` widens every range (the identity replay's error, as a fraction).
// `asked` (--what-if): combinations priced besides.
struct Prices {
  std::vector<FixPrediction> fixes;
  std::vector<PlanStep> plan;
  std::vector<std::string> not_recommended;
  std::vector<PlanStep> measure_first;
  std::vector<WhatIf::Asked> asked;
};
Prices price_fixes(const Graph& base, const JobTraits& traits, const Calibration& cal, double job_ms, double margin,
                   const std::vector<std::vector<std::string>>& asked = {});

// The finding's rule id -> the fix the replay prices for it ("" when none).
std::string_view fix_of_rule(std::string_view rule_id);

}  // namespace gpuscope::analyzer::whatif
