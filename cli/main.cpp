#include <algorithm>
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "common/error.h"

int main(int argc, char** argv) {
  CLI::App app{"gpuscope: GPU profiler and bottleneck advisor for PyTorch training", "gpuscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(GPUSCOPE_VERSION));
  auto registry = gpuscope::cli::command_registry();
  std::sort(registry.begin(), registry.end(), [](auto& a, auto& b) { return a.order < b.order; });
  for (const auto& entry : registry) entry.add(app);
  int parsed_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      parsed_argc = i;
      gpuscope::cli::has_trailing_args = true;
      gpuscope::cli::trailing_args.assign(argv + i + 1, argv + argc);
      break;
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
    std::fprintf(stderr, "gpuscope: error: %s (see gpuscope --help)\n", e.what());
    return 2;
  } catch (const gpuscope::Error& e) {
    std::fprintf(stderr, "gpuscope: error: %s\n", e.what());
    return 2;
  }
  return gpuscope::cli::exit_code;
}
