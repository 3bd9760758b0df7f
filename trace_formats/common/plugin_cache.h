// The per-user cache of torch plugins that `gpuscope setup torch` fills, and
// the one order in which the collector and `gpuscope doctor` look for the
// torch plugin. The cache holds one folder per torch version:
//   <cache>/torch/<version>/libgpuscope_torch.so
// Plain functions of their arguments (and of the environment, through
// settings.h, in cache_dir() alone), cheap enough for the collector.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::plugin_cache {

inline constexpr const char* kTorchPluginFile = "libgpuscope_torch.so";

// GPUSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/gpuscope, else $HOME/.cache/gpuscope;
// empty when none of them is set.
std::string cache_dir();

// A torch version as a folder name: letters, digits and ".+-_" kept, anything
// else (a '/', a space) and a leading '.' become '_'; "2.11.0+cu130" stays as it is.
// Empty for an empty version.
std::string folder_name(std::string_view torch_version);

// <cache>/torch, where setup keeps its entries and its build folders.
std::string torch_root(const std::string& cache);

// <cache>/torch/<folder_name(version)>/libgpuscope_torch.so; empty when the
// cache or the version is empty.
std::string torch_plugin_path(const std::string& cache, std::string_view torch_version);

// The folder names of the cache's entries that hold a plugin, sorted.
std::vector<std::string> cached_torch_versions(const std::string& cache);

// `__version__ = '...'` of a torch version.py (also `__version__: str = "..."`);
// empty when the file or the line is missing.
std::string read_version_py(const std::string& path);

// The torch version of the torch that ships this library, from the files torch
// keeps beside it: <torch>/lib/libtorch_cpu.so -> <torch>/version.py (pip),
// <torch>/_C.*.so -> <torch>/version.py, <libtorch>/lib/libtorch_cpu.so ->
// <libtorch>/build-version (the libtorch archive). Empty when none is there
// (Debian's libtorch_cpu.so lives in /usr/lib/<multiarch>/).
std::string torch_version_near(const std::string& library_path);

// The torch version of a process from the paths of its loaded libraries: that
// of libtorch_cpu.so, else that of the torch/_C extension module (how Debian's
// torch is found: its _C sits in the Python package beside version.py). Empty
// when neither tells.
std::string torch_version_of_libraries(const std::vector<std::string>& loaded_paths);

// Where the torch plugin is looked for, in order; the first that exists is the
// one loaded. GPUSCOPE_TORCH_PLUGIN, when set, is the only candidate.
enum class Origin { kEnvironment, kCache, kCollector };
struct Candidate {
  std::string path;
  Origin origin;
};
// `env_path`: GPUSCOPE_TORCH_PLUGIN or empty; `torch_version`: empty when not
// known (the cache is then skipped); `collector_dir`: empty when not known.
std::vector<Candidate> torch_plugin_candidates(const std::string& env_path, const std::string& cache,
                                               std::string_view torch_version, const std::string& collector_dir);
// "GPUSCOPE_TORCH_PLUGIN", "the plugin cache", "next to the collector".
const char* origin_name(Origin origin);

}  // namespace gpuscope::plugin_cache
