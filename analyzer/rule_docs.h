// The rules described from their code, for docs/rules.md and
// `gpuscope analyze --list-rules`.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::analyzer {

struct ThresholdDoc {
  std::string name;
  double value = 0;
  std::string unit, meaning;
};

struct RuleDoc {
  std::string id, title, detects, saving_model;
  std::vector<ThresholdDoc> thresholds;
};

std::vector<RuleDoc> rule_docs();
std::string rules_markdown();  // the generated part of docs/rules.md

}  // namespace gpuscope::analyzer
