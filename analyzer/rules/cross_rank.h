// Cross-rank rules: findings about a distributed job as a whole, from every
// rank's summary (analyzer/ranks.cpp) rather than one process's context. Data
// plus one function, like the per-process rules; rules/cross_rank_registry.cpp
// lists them, and they are documented and ranked with the others.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "analyzer/result.h"
#include "analyzer/rules/rule.h"

namespace gpuscope::analyzer {

struct CrossRankInput {
  const std::vector<RankSummary>& ranks;  // by rank, at least two with steps
  const Analysis& analysis;               // the analysed process's report so far
};

struct CrossRankRule {
  std::string_view id;
  std::string_view title;
  std::string_view detects;
  std::string_view saving_model;
  std::span<const Threshold> thresholds;
  std::optional<Finding> (*evaluate)(const CrossRankInput& in);
};

std::span<const CrossRankRule* const> cross_rank_rules();

// The rank that arrives last at the collectives: the largest own time in its
// median step (step time less the wait in collectives); nullptr with fewer
// than two ranks with steps.
const RankSummary* last_arrival(const std::vector<RankSummary>& ranks);
// A finding of `rule` with the saving in ms per step of the analysed steps.
Finding make_cross_rank_finding(const CrossRankRule& rule, const Analysis& a, double saving_ms);

}  // namespace gpuscope::analyzer
