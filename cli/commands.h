// Each `gpuscope` subcommand lives in its own file in cli/ and registers itself
// with a static CommandRegistrar; cli/CMakeLists.txt compiles every file here.
#pragma once

#include <CLI/CLI.hpp>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace gpuscope::cli {

// 0 success, 1 a finding/regression for commands that gate CI, 2 bad use or bad input.
inline int exit_code = 0;

// Arguments after the first `--` (the job's command line for `record`), kept
// verbatim and out of CLI11's hands so that it never reorders or parses them.
inline std::vector<std::string> trailing_args;
inline bool has_trailing_args = false;

// A check for integer options that says what it wants: "--top: wants a whole
// number from 1 to 1000, not 'abc'" (CLI11 says "not in range" for both).
inline CLI::Validator whole_number(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const std::string range = lo == LLONG_MIN && hi == LLONG_MAX
                                      ? std::string()
                                      : " from " + std::to_string(lo) + " to " + std::to_string(hi);
        if (used == 0 || used != s.size()) return "wants a whole number" + range + ", not '" + s + "'";
        if (v < lo || v > hi) return "wants a whole number" + range + ", not " + s;
        return {};
      },
      "INT");
}

// The same for real-valued options: a finite number from lo to hi ("nan",
// "inf" and negative durations are refused in words).
inline CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        char range[80];
        std::snprintf(range, sizeof range, " from %g to %g", lo, hi);
        if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v < lo || v > hi)
          return std::string("wants a number") + range + ", not '" + s + "'";
        return {};
      },
      "NUMBER");
}

// For file-name options: `-o ''` is refused at once ("--output: wants a file
// name, not an empty one"), before any input is read, never taken as "not given".
inline CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& s) { return s.empty() ? std::string("wants a file name, not an empty one") : std::string(); },
      "FILE");
}

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
