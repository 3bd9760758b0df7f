// The list of cross-rank rules. A new one is a new rules/<id>.cpp plus one line here.
#include <algorithm>

#include "analyzer/rules/cross_rank.h"
#include "analyzer/rules/rule_util.h"

namespace gpuscope::analyzer {

extern const CrossRankRule kStragglerRule;
extern const CrossRankRule kCollectiveWaitRule;

std::span<const CrossRankRule* const> cross_rank_rules() {
  static const CrossRankRule* const rules[] = {&kStragglerRule, &kCollectiveWaitRule};
  return rules;
}

const RankSummary* last_arrival(const std::vector<RankSummary>& ranks) {
  const RankSummary* best = nullptr;
  int with_steps = 0;
  for (const auto& r : ranks) {
    if (r.steps == 0) continue;
    ++with_steps;
    if (!best || r.own_ms_median > best->own_ms_median) best = &r;
  }
  return with_steps >= 2 ? best : nullptr;
}

Finding make_cross_rank_finding(const CrossRankRule& rule, const Analysis& a, double saving_ms) {
  Finding f;
  f.id = std::string(rule.id);
  f.title = std::string(rule.title);
  f.saving_ms_per_step = saving_ms;
  const double step = a.summary.step_ms_mean;
  f.saving_pct = step > 0 ? 100 * saving_ms / step : 0;
  f.severity = f.saving_pct >= kHighSeverityPct ? Severity::kHigh
               : f.saving_pct >= kMediumSeverityPct ? Severity::kMedium
                                                    : Severity::kLow;
  return f;
}

}  // namespace gpuscope::analyzer
