#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/text.h"

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Names and aliases of every subcommand.
std::vector<std::string> command_names(CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
    for (const auto& alias : sub->get_aliases()) names.push_back(alias);
  }
  return names;
}

// `gpuscope anlyze`: the command's name is wrong, not its arguments; say which
// command was meant rather than CLI11's "a subcommand is required".
int unknown_command(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& n : names) {
    const size_t d = edit_distance(word, n);
    if (d < best_d) best_d = d, best = n;
  }
  const std::string w = gpuscope::terminal_safe(word);
  if (best_d <= std::max<size_t>(2, word.size() / 3))
    std::fprintf(stderr, "gpuscope: unknown command \"%s\"; did you mean \"%s\"?\n", w.c_str(),
                 best.c_str());
  else
    std::fprintf(stderr, "gpuscope: unknown command \"%s\" (see gpuscope help)\n", w.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpuscope: GPU profiler and bottleneck advisor for PyTorch training", "gpuscope"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", std::string(GPUSCOPE_VERSION));
  app.footer("gpuscope help [COMMAND] shows a command's options; gpuscope version prints the version.");
  auto registry = gpuscope::cli::command_registry();
  std::sort(registry.begin(), registry.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (const auto& entry : registry) entry.add(app);
  // `record ... -- job args` and `try ... -- job args`: the job's command line.
  // For every other command `--` only ends the options (gpuscope info -- -dash.db),
  // as CLI11 reads it.
  int parsed_argc = argc;
  const bool runs_a_job = argc > 1 && (std::string(argv[1]) == "record" || std::string(argv[1]) == "try");
  for (int i = 1; runs_a_job && i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      parsed_argc = i;
      gpuscope::cli::has_trailing_args = true;
      gpuscope::cli::trailing_args.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  // The first word: `help [COMMAND]`, `version`, a command, or a global option.
  std::vector<std::string> args(argv + 1, argv + parsed_argc);
  if (!args.empty()) {
    const std::vector<std::string> names = command_names(app);
    const std::string first = args.front();
    if (first == "version") {
      std::printf("%s\n", GPUSCOPE_VERSION);
      return 0;
    }
    if (first == "help") {
      if (args.size() == 1) {
        std::fputs(app.help().c_str(), stdout);
        return 0;
      }
      if (std::find(names.begin(), names.end(), args[1]) == names.end()) return unknown_command(args[1], names);
      std::fputs(app.get_subcommand(args[1])->help().c_str(), stdout);
      return 0;
    }
    if (first.starts_with("-")) {
      if (first != "-h" && first != "--help" && first != "-V" && first != "--version") {
        std::fprintf(stderr, "gpuscope: error: unknown option \"%s\"; a command comes first (see gpuscope help)\n",
                     gpuscope::terminal_safe(first).c_str());
        return 2;
      }
    } else if (std::find(names.begin(), names.end(), first) == names.end()) {
      return unknown_command(first, names);
    }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "gpuscope: error: %s (see gpuscope --help)\n", gpuscope::terminal_safe(e.what()).c_str());
    return 2;
  } catch (const gpuscope::Error& e) {
    std::fprintf(stderr, "gpuscope: error: %s\n", gpuscope::terminal_safe(e.what()).c_str());
    return 2;
  }
  return gpuscope::cli::exit_code;
}
