// Each `gpuscope` subcommand lives in its own file and registers itself here.
// A command's callback returns the process exit code through `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace gpuscope::cli {

// 0 success, 1 a finding/regression for commands that gate CI, 2 bad use or bad input.
inline int exit_code = 0;

// Arguments after the first `--` (the job's command line for `record`), kept
// verbatim and out of CLI11's hands so that it never reorders or parses them.
inline std::vector<std::string> trailing_args;
inline bool has_trailing_args = false;

void add_record_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_schema_command(CLI::App& app);

}  // namespace gpuscope::cli
