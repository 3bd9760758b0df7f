// `gpuscope setup torch [--python PY] [--torch-dir DIR] [--force]`: builds the
// torch plugin for the torch of that Python, from the sources the release ships
// (share/gpuscope/torch-plugin, beside bin/), with the machine's cmake and C++
// compiler, into the per-user cache (common/plugin_cache.h) where the collector
// finds the plugin of the torch a job loads. Once per torch version.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/doctor/probes.h"
#include "cli/record_support.h"
#include "common/error.h"
#include "common/plugin_cache.h"
#include "plugins/torch/build_info.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct SetupArgs {
  std::string python, torch_dir;
  bool force = false;
};

constexpr int kPythonTimeoutMs = 120'000;
constexpr int kConfigureTimeoutMs = 300'000;
constexpr int kBuildTimeoutMs = 1'800'000;

// What the Python says about its torch, one key=value line each.
constexpr const char* kTorchScript = R"PY(
import torch, torch.utils
print("torch_version=" + torch.__version__)
print("cmake_prefix=" + str(torch.utils.cmake_prefix_path))
)PY";

struct TorchInfo {
  std::string version, cmake_prefix;
};

void say(const std::string& line) {
  std::printf("gpuscope setup torch: %s\n", line.c_str());
  std::fflush(stdout);
}

TorchInfo ask_torch(const std::string& python) {
  doctor::ProgramResult r = doctor::run_program({python, "-c", kTorchScript}, kPythonTimeoutMs);
  if (!r.started) throw Error("setup torch: cannot run " + python);
  TorchInfo t;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("torch_version=", 0) == 0) t.version = line.substr(14);
    if (line.rfind("cmake_prefix=", 0) == 0) t.cmake_prefix = line.substr(13);
  }
  if (r.exit_code != 0 || t.version.empty()) {
    std::string last = r.err;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    throw Error("setup torch: " + python + " cannot import torch" + (last.empty() ? "" : ": " + last) +
                " (pass --python the python your jobs run)");
  }
  return t;
}

// torch's CMake config: --torch-dir, else the one torch names, else where
// Debian's libtorch-dev puts it (torch.utils.cmake_prefix_path is wrong there).
std::string torch_cmake_dir(const SetupArgs& a, const TorchInfo& t) {
  std::vector<std::string> candidates;
  if (!a.torch_dir.empty()) candidates.push_back(a.torch_dir);
  else {
    candidates.push_back(t.cmake_prefix + "/Torch");
    candidates.push_back("/usr/lib/x86_64-linux-gnu/cmake/Torch");
    candidates.push_back("/usr/lib/aarch64-linux-gnu/cmake/Torch");
  }
  for (const auto& c : candidates)
    if (fs::exists(c + "/TorchConfig.cmake")) return c;
  throw Error("setup torch: no TorchConfig.cmake in " + candidates.front() +
              " (torch " + t.version + "); pass --torch-dir the folder that holds it");
}

std::string find_compiler() {
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) return find_executable(cxx);
  for (const char* name : {"c++", "g++", "clang++"})
    if (std::string p = find_executable(name); !p.empty()) return p;
  return {};
}

std::string sources_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const fs::path dir = self / "../share/gpuscope/torch-plugin";
  if (ec || !fs::exists(dir / "CMakeLists.txt"))
    throw Error("setup torch: the plugin's sources are not in " + dir.lexically_normal().string() +
                " (install gpuscope with its share/ folder)");
  return fs::canonical(dir).string();
}

// Runs a build step, a dot on the terminal every few seconds so it does not
// look stuck; its output goes to `log`, whose tail is shown when it fails.
void run_step(const std::string& what, const std::vector<std::string>& argv, int timeout_ms, const fs::path& log) {
  const auto t0 = std::chrono::steady_clock::now();
  std::printf("gpuscope setup torch: %s ...", what.c_str());
  std::fflush(stdout);
  doctor::ProgramResult r;
  std::thread worker([&] { r = doctor::run_program(argv, timeout_ms); });
  const bool tty = isatty(STDOUT_FILENO);
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread dots([done, tty] {
    for (int i = 0; !done->load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (tty && i % 50 == 49) {
        std::fputc('.', stdout);
        std::fflush(stdout);
      }
    }
  });
  worker.join();
  done->store(true);
  dots.join();
  std::ofstream(log, std::ios::app) << "$ " << argv[0] << " ...\n" << r.out << r.err;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(" %s in %.0f s\n", r.started && !r.timed_out && r.exit_code == 0 ? "done" : "failed", s);
  if (!r.started) throw Error("setup torch: cannot run " + argv[0]);
  if (r.timed_out) throw Error("setup torch: " + what + " did not finish in time (log: " + log.string() + ")");
  if (r.exit_code != 0) {
    // The compiler's first error line says more than the last line of make.
    std::istringstream lines(r.out + r.err);
    std::string first_error;
    for (std::string line; std::getline(lines, line);)
      if (first_error.empty() && (line.find("error:") != std::string::npos || line.find("Error") != std::string::npos))
        first_error = line;
    throw Error("setup torch: " + what + " failed" + (first_error.empty() ? "" : ": " + first_error) +
                " (log: " + log.string() + ")");
  }
}

// The plugin loaded into the Python's torch, as the collector would load it:
// it must say it was built for this torch.
void check_plugin(const std::string& python, const std::string& path, const std::string& version) {
  doctor::PythonProbe py = doctor::probe_python(python, true, {path, true}, kPythonTimeoutMs);
  if (!py.plugin_error.empty()) throw Error("setup torch: " + path + " does not load into torch " + version + ": " + py.plugin_error);
  if (!py.plugin_says || !torch_plugin::same_torch_release(py.plugin_built_for, version))
    throw Error("setup torch: " + path + " was built for torch '" + py.plugin_built_for + "', not " + version);
}

// Plugins the cache holds for other torch versions (after an upgrade).
std::vector<std::string> other_versions(const std::string& cache, const std::string& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache + "/torch", ec)) {
    const std::string name = e.path().filename().string();
    if (name != folder && name[0] != '.' && fs::exists(e.path() / "libgpuscope_torch.so")) out.push_back(name);
  }
  return out;
}

void run_setup_torch(const SetupArgs& a) {
  const std::string name = a.python.empty() ? "python3" : a.python;
  const std::string python = find_executable(name);
  if (python.empty()) throw Error("setup torch: " + name + ": no such executable (pass --python the python your jobs run)");
  const TorchInfo torch = ask_torch(python);
  const std::string cache = plugin_cache::cache_dir();
  const std::string dest = plugin_cache::torch_plugin_path(torch.version);
  if (dest.empty())
    throw Error("setup torch: no cache folder (set GPUSCOPE_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  say("torch " + torch.version + " of " + python);
  const std::string folder = plugin_cache::folder_name(torch.version);
  const auto others = other_versions(cache, folder);
  if (!others.empty()) {
    std::string list;
    for (const auto& o : others) list += (list.empty() ? "" : ", ") + o;
    say("the cache also holds plugins for torch " + list + " (jobs get the one of the torch they load)");
  }
  if (!a.force && fs::exists(dest)) {
    check_plugin(python, dest, torch.version);
    say("reusing " + dest + ", built for torch " + torch.version + " (--force rebuilds it)");
    return;
  }

  // Checked before any work: without a compiler nothing can be built.
  const std::string cxx = find_compiler();
  if (cxx.empty())
    throw Error("setup torch: no C++ compiler (c++, g++ or clang++ on PATH, or CXX): install one "
                "(Ubuntu: apt-get install g++); until then jobs are recorded without torch ops");
  const std::string cmake = find_executable("cmake");
  if (cmake.empty())
    throw Error("setup torch: no cmake on PATH: install it (Ubuntu: apt-get install cmake, or pip install cmake); "
                "until then jobs are recorded without torch ops");
  const std::string torch_dir = torch_cmake_dir(a, torch);
  const std::string src = sources_dir();

  // Built in a folder of its own beside the destination and moved into place
  // at the end, so the cache never holds a half-written plugin.
  const fs::path target_dir = fs::path(dest).parent_path();
  fs::create_directories(target_dir.parent_path());
  const fs::path work = target_dir.parent_path() / (".build-" + folder + "-" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path log = work / "build.log";
  try {
    run_step("configuring against " + torch_dir,
             {cmake, "-S", src, "-B", (work / "build").string(), "-DTorch_DIR=" + torch_dir,
              "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_COMPILER=" + cxx},
             kConfigureTimeoutMs, log);
    const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
    run_step("compiling with " + cxx + " (" + std::to_string(jobs) + " jobs)",
             {cmake, "--build", (work / "build").string(), "-j", std::to_string(jobs), "--target", "gpuscope_torch"},
             kBuildTimeoutMs, log);
    const fs::path built = work / "build" / "libgpuscope_torch.so";
    check_plugin(python, built.string(), torch.version);
    fs::create_directories(target_dir);
    const fs::path staged = target_dir / (".libgpuscope_torch.so." + std::to_string(getpid()));
    fs::copy_file(built, staged, fs::copy_options::overwrite_existing);
    fs::rename(staged, dest);
    std::ofstream(target_dir / "built.txt") << "torch " << torch.version << "\npython " << python << "\nTorch_DIR "
                                            << torch_dir << "\ncompiler " << cxx << "\n";
  } catch (...) {
    say("kept the build folder for a look: " + work.string());
    throw;
  }
  fs::remove_all(work);
  say("built " + dest + "; jobs that load torch " + torch.version + " are recorded with ops");
}

void add_setup_command(CLI::App& app) {
  auto* setup = app.add_subcommand("setup", "Prepare this machine for recording (setup torch)");
  setup->require_subcommand(1);
  auto* torch = setup->add_subcommand(
      "torch", "Build the torch plugin for the torch of a Python, into the per-user cache the collector searches");
  static SetupArgs args;
  torch->add_option("--python", args.python, "The python your jobs run (default: python3 on PATH)");
  torch->add_option("--torch-dir", args.torch_dir,
                    "Folder of torch's TorchConfig.cmake (default: the one torch names, or Debian's)");
  torch->add_flag("--force", args.force, "Build again even when the cache holds a plugin for this torch");
  torch->footer(
      "Needs cmake and a C++ compiler. The plugin lands in $GPUSCOPE_CACHE_DIR (default "
      "~/.cache/gpuscope)/torch/<version>/; run it again after a torch upgrade.\n"
      "Example: gpuscope setup torch --python ~/venv/bin/python");
  torch->callback([] { run_setup_torch(args); });
}

CommandRegistrar registrar(85, add_setup_command);

}  // namespace
}  // namespace gpuscope::cli
