// Learning from measurements (issue 48, item 4; docs/try.md): `gpuscope try`
// appends what each fix measured, beside what the replay predicted, to
// try_history.jsonl in gpuscope's cache. The CLI reads that file and passes it
// in (the analyzer never reads the user's cache); here the tries of the
// analysed GPU correct the what-if predictions for the same fixes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/result.h"

namespace gpuscope::analyzer::whatif {

// Fewer tries of a fix than this leave its prediction as the replay made it:
// the median and spread of two residuals say little about the next one.
inline constexpr int64_t kMinTries = 3;
// Only the latest tries of a fix count: older ones were compared with the
// predictions of an older replay.
inline constexpr size_t kMaxTries = 20;

struct TryRecord {
  std::string gpu;
  std::vector<std::string> fixes;  // sorted: "amp+channels-last" and "channels-last+amp" are one variant
  double measured_saving_pct = 0, measured_low_pct = 0, measured_high_pct = 0;
  std::optional<double> predicted_saving_pct;  // null: try had no prediction for it
};

struct TryHistory {
  std::string file;  // named in the report
  std::vector<TryRecord> tries;  // in the file's order (oldest first)
  int64_t damaged_lines = 0;     // not JSON, or a field missing or out of range
};

// try_history.jsonl's text (cli/try_report.cpp, history_lines): one JSON object
// a line with gpu, fixes (or fix, "a+b"), measured_saving_pct,
// measured_range_pct and predicted_saving_pct (a number or null). Blank lines
// are skipped; any other line that lacks them counts as damaged.
TryHistory parse_try_history(std::string_view text, std::string file);

// Corrects a.whatif's fixes, plan and asked combinations (and the findings that
// took a fix's prediction) with the tries on `gpu` of the same fix set. Per
// try, the residual is the log of the measured step ratio over the predicted
// one, ln((1 - measured/100) / (1 - predicted/100)); with at least kMinTries,
// the prediction is scaled by exp(median) and its range becomes the tries' own
// (each try's rounds' range, as residuals) around the median, widened by
// (n + 1) / (n - 1) for a small n. Fewer tries: counted, nothing changed.
void correct_by_tries(Analysis& a, const TryHistory& history, std::string_view gpu);

}  // namespace gpuscope::analyzer::whatif
