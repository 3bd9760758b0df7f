// `gpuscope setup torch`: builds the torch plugin for the torch of a Python
// into the per-user cache (common/plugin_cache.h), where the collector finds
// it. Each step is a function here so tests can drive it with a fake Python,
// a fake cache and a PATH without a compiler; cli/setup_command.cpp strings
// them together. Failures throw Error with one line that says what to do.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace gpuscope::setup {

// What the Python says about its torch.
struct TorchInfo {
  std::string python;        // the interpreter asked
  std::string version;       // torch.__version__
  std::string cmake_prefix;  // torch.utils.cmake_prefix_path
  std::string package;       // the torch package folder (include/, lib/)
  std::string cxx11_abi;     // torch._C._GLIBCXX_USE_CXX11_ABI as 0 or 1
  std::string multiarch;     // sysconfig's MULTIARCH ("x86_64-linux-gnu"), may be empty
  std::string error;         // "ModuleNotFoundError: ..." when import torch failed
};

// The key=value lines of the query script.
TorchInfo parse_torch_info(const std::string& out);
// Runs the query script with `python` (a path). Throws Error when it does not
// run or has no torch.
TorchInfo ask_python(const std::string& python, int timeout_ms);

// Torch's CMake config folder (the one holding TorchConfig.cmake): `given`
// (--torch-dir: that folder, or a prefix holding Torch/ or share/cmake/Torch/),
// else <cmake_prefix>/Torch, else /usr/lib/<multiarch>/cmake/Torch (Debian's
// libtorch-dev, whose Python package has no CMake files). Empty when none
// has TorchConfig.cmake; throws Error when `given` has none.
std::string find_torch_dir(const TorchInfo& torch, const std::string& given);
// PACKAGE_VERSION of <dir>/TorchConfigVersion.cmake ("2.11.0"); empty when unknown.
std::string torch_dir_version(const std::string& dir);

// What a run does for this torch version and cache.
struct Plan {
  std::string plugin;               // the cache entry for the version
  bool reuse = false;               // it exists and --force was not given
  std::vector<std::string> others;  // entries of other versions (an upgrade, or several torches)
};
// Throws Error when there is no cache folder or no version.
Plan plan(const std::string& cache, const std::string& torch_version, bool force);

// The programs a build needs. `python_dir`: where a venv's pip-installed cmake
// may sit when the venv is not activated.
struct Tools {
  std::string cmake;
  std::string cxx;        // $CXX's program, else c++, g++ or clang++ on PATH
  bool cxx_from_env = false;  // CMake then reads CXX itself (it may hold a launcher or flags)
  std::string generator;  // "Ninja" or "Unix Makefiles"
};
// Throws Error naming everything missing in one line.
Tools find_tools(const std::string& python_dir);

// <exe_dir>/../share/gpuscope/torch-plugin, holding the staged CMakeLists.txt.
// Throws Error naming the folder when it is not there.
std::string find_sources(const std::string& exe_dir);

struct BuildRequest {
  TorchInfo torch;
  std::string torch_dir;  // may be empty: torch's headers and libraries then (package)
  Tools tools;
  std::string sources;
  Plan plan;
  // Progress for people: called with short texts ("configuring", "compiling 3/8").
  std::function<void(const std::string&)> progress;
};
// Configures and builds in a temporary folder inside <cache>/torch, checks that
// the Python loads the plugin and that it was built for its torch, and renames
// it into plan.plugin (so the cache never holds half a plugin). Build folders
// left by runs that were killed are removed first. Returns a note for people
// when the build took another road than torch's CMake config; throws Error
// with the log's path when a step fails.
std::string build_plugin(const BuildRequest& request, const std::string& cache);

}  // namespace gpuscope::setup
