// `gpuscope try`'s results and their reports (docs/try.md): the terminal
// table and the JSON document (schema gpuscope-try/1), which --attach stores
// in the recording (meta try_results) and the history file keeps pairs of.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/try_plan.h"
#include "cli/try_run.h"
#include "cli/try_stats.h"

namespace gpuscope::cli::try_report {

inline constexpr const char* kSchema = "gpuscope-try/1";

struct VariantResult {
  try_plan::Variant variant;                 // fixes empty: the baseline
  std::vector<std::optional<try_run::Result>> runs;  // by round; nullopt: not run
  std::string state = "not-run";             // measured, failed, not-applied, not-run
  std::string why;                           // for every state but measured
  std::vector<std::string> applied;          // the hook's lines ("amp: autocast ... 1 module")
  std::vector<std::string> notes;            // the hook's notes
  double median_ms = 0, p10_ms = 0, p90_ms = 0;  // over every steady step of every round
  std::optional<try_stats::Comparison> cmp;  // against the baseline
  std::optional<bool> within_range;          // measured range overlaps the predicted one
  size_t extra_rounds = 0;                   // rounds run beyond --rounds (docs/try.md, "Extra rounds")
  std::string extra_why;                     // why they ran, as said when the first of them did
};

struct TryResult {
  std::vector<std::string> command;
  size_t steps = 0, rounds = 0, warmup_max = 0;
  size_t max_rounds = 0;  // the cap on rounds with the extra ones (--max-rounds)
  std::string from;  // --from as given
  std::string gpu, torch, device;
  bool collector = false;  // the dormant collector was loaded
  VariantResult baseline;
  std::vector<VariantResult> variants;
  std::vector<std::string> not_tried;
  size_t runs_planned = 0, runs_done = 0;
  bool interrupted = false;
  double wall_s = 0;
  double alpha = 0.05;
};

// Why variant `v` needs rounds beyond those it had ("" when it does not):
// measured in every round so far, its savings spread too wide or too few
// rounds agree (try_stats::more_rounds_why, after t.rounds rounds).
std::string more_rounds_why(const TryResult& t, const VariantResult& v);

// Fills states, statistics and within_range from the runs.
void summarize(TryResult& t);

nlohmann::ordered_json to_json(const TryResult& t);
std::string to_text(const TryResult& t);

// One line per measured variant for the history file (docs/try.md, "Learning").
std::vector<std::string> history_lines(const TryResult& t, long long utc_s);

}  // namespace gpuscope::cli::try_report
