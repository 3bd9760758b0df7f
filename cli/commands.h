// Each `gpuscope` subcommand lives in its own file in cli/ and registers itself
// with a static CommandRegistrar; cli/CMakeLists.txt compiles every file here.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace gpuscope::cli {

// 0 success, 1 a finding/regression for commands that gate CI, 2 bad use or bad input.
inline int exit_code = 0;

// Arguments after the first `--` (the job's command line for `record`), kept
// verbatim and out of CLI11's hands so that it never reorders or parses them.
inline std::vector<std::string> trailing_args;
inline bool has_trailing_args = false;

using AddCommand = void (*)(CLI::App& app);

struct CommandEntry {
  int order;  // position in --help
  AddCommand add;
};

inline std::vector<CommandEntry>& command_registry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

struct CommandRegistrar {
  CommandRegistrar(int order, AddCommand add) { command_registry().push_back({order, add}); }
};

}  // namespace gpuscope::cli
