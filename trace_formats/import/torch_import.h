// `gpuscope import`: torch.profiler / Kineto Chrome-trace JSON (plain or gzip)
// into a gpuscope database, streaming with bounded memory.
#pragma once

#include <string>

#include "trace_formats/import/byte_source.h"
#include "trace_formats/import/importer.h"

namespace gpuscope::formats {

// Writes `db_path` through a temporary file renamed at the end; on any error
// nothing is left behind and Error("<file>: <problem>") is thrown. Refuses an
// existing output unless options.force.
ImportResult import_torch_trace(const std::string& trace_path, const std::string& db_path,
                                const ImportOptions& options);

// The same from any source into `db_path`, which must not exist or be empty (tests, fuzzing).
ImportResult import_into(ByteSource& src, const std::string& db_path, const ImportOptions& options);

// Its entry in the importer list (importers.cpp); it claims JSON whose first
// character (after a byte order mark and white space) is '{' or '['.
const Importer& torch_profiler_importer();

}  // namespace gpuscope::formats
