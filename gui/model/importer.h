// torch.profiler traces open through the importer (gs_formats) when this
// build has it: the trace is converted into a temporary database first.
#pragma once

#include <string>

namespace gpuscope::gui {

// By name: .json, .json.gz (including Kineto's *.pt.trace.json[.gz]).
bool looks_like_trace_json(const std::string& path);
// Imports `path` into a new temporary database and returns its path; throws
// gpuscope::Error("<path>: <reason>") when that is not possible.
std::string import_to_temp_database(const std::string& path);
bool have_importer();

}  // namespace gpuscope::gui
