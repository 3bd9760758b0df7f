// The entry point of gs_analyzer: analyze() turns a recording into the value
// types of analyzer/result.h; analyzer/report/report.h renders them and
// analyzer/rule_docs.h documents the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/result.h"
#include "analyzer/whatif/calibration.h"
#include "analyzer/whatif/history.h"

namespace gpuscope::store {
class Reader;
}

namespace gpuscope::analyzer {

struct Options {
  std::optional<int64_t> first_step, last_step;  // --steps A-B, by step number, inclusive
  std::optional<int64_t> device;                 // --device N (default: the busiest)
  std::optional<int64_t> pid;                    // --pid P (default: the process with most GPU work)
  std::optional<int64_t> rank;                   // --rank N: the process whose RANK is N (instead of --pid)
  int top = 10;                                  // rows in the hotspot tables
  bool progress = false;                         // progress lines on stderr
  // The what-if replay (docs/rules.md, "What-if"); off (--no-what-if): the
  // rules' own estimates carried over to the untraced job, as before it.
  bool replay = true;
  // --what-if: combinations of fix ids to predict besides the plan ("amp+cuda-graphs").
  std::vector<std::vector<std::string>> what_if;
  // Read by the CLI, never by the analyzer (docs/try.md, "Learning from
  // measurements"): --calibration FILE and `gpuscope calibrate`'s tables in the
  // cache, and `gpuscope try`'s try_history.jsonl, whose tries of the analysed
  // GPU correct the what-if predictions (empty: none).
  whatif::LocalCalibrations calibrations;
  whatif::TryHistory try_history;
};

// Parses "amp+cuda-graphs" into fix ids; throws Error naming an unknown one.
std::vector<std::string> parse_fix_list(const std::string& text);

// Parses "A-B", "A-", "-B" or "A" into options.first_step/last_step; throws Error.
void parse_step_range(const std::string& text, Options& options);

// Throws Error("<file>: <problem>") for input it cannot analyse (no events,
// no steps in --steps, unknown --device or --pid).
Analysis analyze(store::Reader& reader, const Options& options);

}  // namespace gpuscope::analyzer
