// A rule is data plus one function: its id (a stable interface), title, what
// it detects, how it estimates the saving, its thresholds as named constants,
// and evaluate(), which returns a finding with evidence and the fix, or nothing.
// Each rule lives in rules/<id>.cpp; rules/registry.cpp lists them.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "analyzer/result.h"
#include "analyzer/context.h"

namespace gpuscope::analyzer {

struct Threshold {
  std::string_view name;
  double value;
  std::string_view unit;
  std::string_view meaning;
};

// What a rule sees: the shared context plus the parts of the analysis already
// computed (summary, idle attribution, memory, hotspots).
struct RuleInput {
  const Context& ctx;
  const Analysis& analysis;
};

struct Rule {
  std::string_view id;
  std::string_view title;
  std::string_view detects;
  std::string_view saving_model;
  std::span<const Threshold> thresholds;
  std::optional<Finding> (*evaluate)(const RuleInput& in);
};

std::span<const Rule* const> all_rules();

}  // namespace gpuscope::analyzer
