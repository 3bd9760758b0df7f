#include "trace_formats/common/plugin_cache.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "trace_formats/common/settings.h"

namespace gpuscope::plugin_cache {
namespace {

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string trimmed(std::string s) {
  const auto end = s.find_last_not_of(" \t\r\n");
  s.erase(end == std::string::npos ? 0 : end + 1);
  return s.substr(std::min(s.size(), s.find_first_not_of(" \t")));
}

// The first line of the libtorch archive's build-version ("2.11.0+cu130").
std::string read_build_version(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return {};
  line = trimmed(line);
  return line.find_first_of(" '\"=") == std::string::npos ? line : std::string();
}

bool is_libtorch_cpu(const std::string& base) { return base.rfind("libtorch_cpu.so", 0) == 0; }

// torch/_C.cpython-312-x86_64-linux-gnu.so, torch/_C.so.
bool is_torch_extension(const std::string& path) {
  const std::string base = base_of(path), dir = dir_of(path);
  return base.rfind("_C.", 0) == 0 && base.find(".so") != std::string::npos && base_of(dir) == "torch";
}

}  // namespace

std::string cache_dir() {
  if (const char* dir = settings::text(settings::Id::kCacheDir)) return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/gpuscope";  // the XDG spec ignores relative paths
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/gpuscope";
  return {};
}

std::string folder_name(std::string_view torch_version) {
  std::string out;
  for (char ch : torch_version) {
    const bool keep = std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '+' || ch == '-' || ch == '_';
    out += keep ? ch : '_';
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';  // no ".", "..", nor a hidden folder (setup's build folders)
  return out;
}

std::string torch_root(const std::string& cache) { return cache.empty() ? std::string() : cache + "/torch"; }

std::string torch_plugin_path(const std::string& cache, std::string_view torch_version) {
  const std::string name = folder_name(torch_version);
  if (cache.empty() || name.empty()) return {};
  return torch_root(cache) + "/" + name + "/" + kTorchPluginFile;
}

std::vector<std::string> cached_torch_versions(const std::string& cache) {
  std::vector<std::string> versions;
  const std::string root = torch_root(cache);
  DIR* dir = root.empty() ? nullptr : opendir(root.c_str());
  if (!dir) return versions;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;
    if (access((root + "/" + name + "/" + kTorchPluginFile).c_str(), R_OK) == 0) versions.push_back(name);
  }
  closedir(dir);
  std::sort(versions.begin(), versions.end());
  return versions;
}

std::string read_version_py(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("__version__", 0) != 0) continue;
    const auto eq = line.find('=');
    const auto open = line.find_first_of("'\"", eq == std::string::npos ? line.size() : eq);
    if (open == std::string::npos) continue;
    const auto close = line.find(line[open], open + 1);
    if (close == std::string::npos) continue;
    return line.substr(open + 1, close - open - 1);
  }
  return {};
}

std::string torch_version_near(const std::string& library_path) {
  const std::string dir = dir_of(library_path);
  if (is_torch_extension(library_path)) return read_version_py(dir + "/version.py");
  std::string v = read_version_py(dir + "/../version.py");
  return v.empty() ? read_build_version(dir + "/../build-version") : v;
}

std::string torch_version_of_libraries(const std::vector<std::string>& loaded_paths) {
  for (const auto& p : loaded_paths)
    if (is_libtorch_cpu(base_of(p)))
      if (std::string v = torch_version_near(p); !v.empty()) return v;
  for (const auto& p : loaded_paths)
    if (is_torch_extension(p))
      if (std::string v = torch_version_near(p); !v.empty()) return v;
  return {};
}

std::vector<Candidate> torch_plugin_candidates(const std::string& env_path, const std::string& cache,
                                               std::string_view torch_version, const std::string& collector_dir) {
  if (!env_path.empty()) return {{env_path, Origin::kEnvironment}};
  std::vector<Candidate> out;
  if (std::string cached = torch_plugin_path(cache, torch_version); !cached.empty())
    out.push_back({std::move(cached), Origin::kCache});
  if (!collector_dir.empty()) out.push_back({collector_dir + "/" + kTorchPluginFile, Origin::kCollector});
  return out;
}

const char* origin_name(Origin origin) {
  switch (origin) {
    case Origin::kEnvironment:
      return settings::name(settings::Id::kTorchPlugin);
    case Origin::kCache:
      return "the plugin cache";
    case Origin::kCollector:
      return "next to the collector";
  }
  return "";
}

}  // namespace gpuscope::plugin_cache
