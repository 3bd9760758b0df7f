// `gpuscope import`: torch.profiler / Kineto Chrome-trace JSON (plain or gzip)
// into a gpuscope database, streaming with bounded memory.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "import/byte_source.h"
#include "import/kineto_mapper.h"
#include "import/trace_reader.h"

namespace gpuscope::formats {

struct ImportOptions {
  bool force = false;     // replace an existing output
  bool progress = false;  // a progress line on stderr (only when it is a terminal)
  std::vector<std::pair<std::string, std::string>> meta;  // extra meta rows, e.g. gpuscope_version
  size_t window = size_t{4} << 20;  // initial parse window; tests shrink it
  // Events held back to find the time origin first (origin_lookahead.h); 0
  // writes from the first event on. Tests vary it: the rows must not change.
  size_t lookahead_events = 8192;
};

struct ImportResult {
  ImportCounts counts;
  ReadResult read;
  double seconds = 0;
};

// Writes `db_path` through a temporary file renamed at the end; on any error
// nothing is left behind and Error("<file>: <problem>") is thrown. Refuses an
// existing output unless options.force.
ImportResult import_torch_trace(const std::string& trace_path, const std::string& db_path,
                                const ImportOptions& options);

// The same from any source into `db_path`, which must not exist (tests, fuzzing).
ImportResult import_into(ByteSource& src, const std::string& db_path, const ImportOptions& options);

// "12345 events: 100 kernels, ...; unknown categories: foo 3" for the CLI.
std::string import_summary(const ImportResult& r);

}  // namespace gpuscope::formats
