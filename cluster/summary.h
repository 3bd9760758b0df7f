// One recording's per-rank summary for `gpuscope cluster`: what identifies
// its job (as merge/inputs.h reads it) and its ranks' pass
// (analyzer::RankPass), written as one line of JSON so that the Dask driver
// hands it on unparsed. The reduce needs nothing else: no raw events.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/ranks.h"
#include "merge/inputs.h"

namespace gpuscope::cluster {

// The format's version: bump when a field changes meaning.
inline constexpr const char* kSummarySchema = "gpuscope-rank-summary/1";

struct FileSummary {
  std::string path, host, job_key;  // as merge::Input
  int64_t utc_first = 0, utc_last = 0;
  std::vector<merge::InputProcess> processes;
  analyzer::RankPass pass;
};

// Opens a recording (Error "<path>: not a gpuscope recording..." otherwise)
// and summarizes every rank of it.
FileSummary summarize_file(const std::string& path, const analyzer::Options& options);

// One line, no newline inside; doubles round-trip exactly.
std::string to_json_line(const FileSummary& s);
// Every summary in `text`: one JSON object per line, blank lines skipped.
// Throws Error "<origin>: line N: ..." on anything else.
std::vector<FileSummary> parse_summaries(std::string_view text, const std::string& origin);

// The summary as the job check of `gpuscope merge` sees a file (no reader).
merge::Input as_input(const FileSummary& s);

}  // namespace gpuscope::cluster
