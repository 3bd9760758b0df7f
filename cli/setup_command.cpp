// `gpuscope setup torch [--python PY] [--torch-dir DIR] [--force]`: builds the
// torch plugin for the torch of a Python, with that torch's CMake config and
// this machine's compiler, into the per-user cache keyed by the torch version
// (common/plugin_cache.h), where the collector finds it. A second run for the
// same torch reuses the plugin; another torch version gets its own entry.
// The steps are in cli/setup/torch_setup.h.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/setup/torch_setup.h"
#include "cli/support/programs.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/text.h"
#include "plugins/torch/build_info.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

// A cold `import torch` on a network file system takes tens of seconds.
constexpr int kPythonTimeoutMs = 120000;

struct SetupTorchArgs {
  std::string python, torch_dir;
  bool force = false;
};

void say(const std::string& line) {
  std::printf("%s\n", terminal_safe(line).c_str());
  std::fflush(stdout);
}

// One self-overwriting line on stderr while the build runs, on a terminal only.
class BuildProgress {
 public:
  BuildProgress() : shown_(isatty(2)), start_(std::chrono::steady_clock::now()) {}
  ~BuildProgress() { done(); }
  void operator()(const std::string& step) {
    if (!shown_) return;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_);
    std::fprintf(stderr, "\r\033[Ksetup torch: %s (%lld s)", step.c_str(), static_cast<long long>(secs.count()));
    std::fflush(stderr);
  }
  void done() {
    if (shown_) std::fputs("\r\033[K", stderr), std::fflush(stderr);
    shown_ = false;
  }
  long long seconds() const {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool shown_;
  std::chrono::steady_clock::time_point start_;
};

void run_setup_torch(const SetupTorchArgs& a) {
  const std::string name = a.python.empty() ? "python3" : a.python;
  const std::string python = find_executable(name);
  if (python.empty())
    throw Error("setup torch: " + name + ": " + executable_problem(name) + " (pass --python the python your jobs run)");
  const setup::TorchInfo torch = setup::ask_python(python, kPythonTimeoutMs);

  const std::string cache = plugin_cache::cache_dir();
  const setup::Plan plan = setup::plan(cache, torch.version, a.force);
  if (plan.reuse) {
    say("torch " + torch.version + " (" + python + "): reusing " + plan.plugin +
        ", built earlier for this torch (--force builds it again)");
    return;
  }

  // What is missing is said before anything else, in one line.
  const setup::Tools tools = setup::find_tools(fs::path(python).parent_path().string());
  std::string torch_dir = setup::find_torch_dir(torch, a.torch_dir);
  // A config of another torch (Debian's, found as a fallback) would build a
  // plugin this torch refuses: its headers then, or stop when it was asked for.
  if (const std::string v = torch_dir.empty() ? "" : setup::torch_dir_version(torch_dir);
      !v.empty() && !torch_plugin::same_torch_release(v, torch.version)) {
    if (!a.torch_dir.empty())
      throw Error("setup torch: " + torch_dir + " is torch " + v + ", but " + python + " runs torch " + torch.version +
                  ": pass the --torch-dir of that torch");
    torch_dir.clear();
  }
  say("torch " + torch.version + " (" + python + "), " +
      (torch_dir.empty() ? "headers in " + torch.package : "CMake config " + torch_dir));
  if (!plan.others.empty()) {
    std::string list;
    for (const auto& v : plan.others) list += (list.empty() ? "" : ", ") + v;
    say("the plugin cache held a plugin for torch " + list + ", not for " + torch.version +
        " (torch upgraded?): building one for " + torch.version + " beside it");
  }
  const std::string self = fs::read_symlink("/proc/self/exe").parent_path().string();
  const std::string sources = setup::find_sources(self);

  say("building " + plan.plugin + " with " + tools.cxx + " (a minute or two)");
  BuildProgress progress;
  setup::BuildRequest request{torch, torch_dir, tools, sources, plan, [&](const std::string& s) { progress(s); }};
  const std::string note = setup::build_plugin(request, cache);
  progress.done();
  if (!note.empty()) say(note);
  say("built " + plan.plugin + " in " + std::to_string(progress.seconds()) +
      " s: gpuscope record loads it into jobs of torch " + torch.version);
}

}  // namespace

static void add_setup_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("setup", "Prepare this machine for recording: build the torch plugin (setup torch)");
  cmd->require_subcommand(1);
  auto* torch = cmd->add_subcommand(
      "torch", "Build the torch plugin for the torch of a python, into the per-user cache the collector reads");
  static SetupTorchArgs args;
  torch->add_option("--python", args.python, "The python whose torch jobs will run (default: python3 on PATH)");
  torch->add_option("--torch-dir", args.torch_dir,
                    "Torch's CMake config folder (TorchConfig.cmake), when the python's torch has none");
  torch->add_flag("--force", args.force, "Build again even when the cache holds a plugin for this torch");
  torch->footer(
      "Needs CMake, make or ninja, and a C++ compiler (CXX, else c++, g++ or clang++). The plugin goes to\n"
      "<cache>/torch/<torch version>/libgpuscope_torch.so, <cache> being GPUSCOPE_CACHE_DIR, else\n"
      "$XDG_CACHE_HOME/gpuscope, else ~/.cache/gpuscope. Without it jobs are recorded without torch ops.\n"
      "Exit codes: 0 built or reused, 2 it could not be built (one line says why).");
  torch->callback([] { run_setup_torch(args); });
}

namespace {
CommandRegistrar registrar(75, add_setup_command);
}  // namespace

}  // namespace gpuscope::cli
