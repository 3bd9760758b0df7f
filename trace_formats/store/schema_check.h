// A recording's tables and columns checked against the schema when a reader
// opens it, so that a damaged file (a table dropped by hand, a half-copied
// database) is refused in one line instead of read as an empty job.
#pragma once

#include <string>

#include "trace_formats/store/sqlite.h"

namespace gpuscope::store {

// Throws Error("<path>: damaged recording: ...") naming the missing tables or
// columns (no SQL text). Columns and tables the schema gained after
// recordings were made without them (kOptional in schema_check.cpp) are not
// required.
void check_tables(Connection& db);

}  // namespace gpuscope::store
