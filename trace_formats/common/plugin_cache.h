// The per-user cache of torch plugins that `gpuscope setup torch` fills and
// the collector and `gpuscope doctor` look in: one folder per torch version,
// <cache>/torch/<version>/libgpuscope_torch.so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::plugin_cache {

// GPUSCOPE_CACHE_DIR, else $XDG_CACHE_HOME/gpuscope, else $HOME/.cache/gpuscope;
// empty when none of them is set.
std::string cache_dir();

// The version as a folder name: letters, digits and ".+-_" kept, the rest "_"
// ("2.11.0+cu130" stays as it is).
std::string folder_name(std::string_view torch_version);

// <cache>/torch/<version>/libgpuscope_torch.so; empty without a cache folder
// or a version.
std::string torch_plugin_path(std::string_view torch_version);

// The torch.__version__ of the torch a process loaded, from the paths of its
// shared objects: <torch>/version.py (`__version__ = '...'`) beside torch's
// Python extension (<torch>/_C.*.so), or above its libraries
// (<torch>/lib/libtorch_cpu.so, pip and conda; Debian keeps those elsewhere).
// Empty when neither is there.
std::string torch_version_of_process(const std::vector<std::string>& loaded);

}  // namespace gpuscope::plugin_cache
