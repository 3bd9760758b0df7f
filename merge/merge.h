// `gpuscope merge`: the per-node recordings of one distributed job (`record -o
// run_%h.db` on each host) put into one recording, ranks kept, every file's
// times moved onto the first file's clock by the offset its collectives give
// (merge/align.h). Public API of library gs_merge.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "merge/align.h"

namespace gpuscope::merge {

struct Options {
  bool force = false;     // overwrite an existing output (never an input)
  bool progress = false;  // a progress line on a terminal
  std::string gpuscope_version;
};

struct FileReport {
  std::string path, description;  // description: "node1.db (host b, ranks 2-3)"
  bool reference = false;
  Alignment alignment;  // offset 0 for the reference
  std::vector<std::pair<int64_t, int64_t>> renumbered_pids;  // (pid in the file, pid in the output)
  int64_t rows = 0;
};

struct Result {
  std::vector<FileReport> files;
  int64_t rows = 0;
  int ranks = 0;
};

// A pid that an earlier file already holds (containers on several hosts often
// give the ranks the same pids) is renumbered from here up, above Linux's
// largest pid, so that no renumbered pid is mistaken for a real one.
inline constexpr int64_t kFirstRenumberedPid = (int64_t{1} << 22) + 1;
// A residual above this is worth a warning: the offset is that uncertain.
inline constexpr int64_t kLargeResidualNs = 1'000'000;

// Throws Error naming the file and the problem (not a recording, another job,
// no shared collective, output exists without `force`, output is an input);
// then nothing is written. The output appears whole or not at all.
Result merge_recordings(const std::vector<std::string>& inputs, const std::string& output, const Options& options);

// One line per file for stderr: its offset and residual, or "reference clock".
std::string describe(const FileReport& f);

}  // namespace gpuscope::merge
