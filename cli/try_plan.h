// What `gpuscope try` runs (docs/try.md): the variants, from --fixes, from a
// report's findings and plan (--from), or every fix the hook applies; and
// what the what-if replay predicted for each, from analyze's JSON report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscope::cli::try_plan {

// The fixes the hook applies without a code change, in the replay's order.
const std::vector<std::string>& hookable();
// Fixes the replay prices that need a code change (host-sync).
bool needs_code_change(const std::string& fix);

struct Prediction {
  double saving_pct = 0;             // of the job's untraced step, in %
  double low_pct = 0, high_pct = 0;  // the replay's range
  std::string from;                  // "fixes" (one fix priced alone), "plan" (a cumulative entry), "asked"
};

struct Variant {
  std::vector<std::string> fixes;  // applied together
  std::optional<Prediction> predicted;
  std::string name() const;  // "amp+compile"
};

struct Plan {
  std::vector<Variant> variants;
  std::vector<std::string> not_tried;  // "host-sync: needs a code change"
  std::string report_source;           // the report or recording predictions come from ("" none)
  double job_step_ms = 0;              // the replay's anchor (0: no report)
  std::string gpu;                     // the recording's device, "" when unknown
  std::string torch;                   // the recording's torch version
  bool replay_available = false;
};

// "amp,compile+cuda-graphs" -> {{amp}, {compile, cuda-graphs}}; throws Error
// naming an unknown fix, an empty entry or a variant given twice.
std::vector<std::vector<std::string>> parse_fixes(const std::string& text);

// The variants: `fixes` when given (each priced from `report` when it is
// there), else the report's findings and plan entries, else every hookable fix.
Plan make_plan(const std::vector<std::vector<std::string>>& fixes, const nlohmann::json* report);

// The replay's prediction for this set of fixes in `report` (analyze --format json).
std::optional<Prediction> predict(const std::vector<std::string>& fixes, const nlohmann::json& report);

}  // namespace gpuscope::cli::try_plan
