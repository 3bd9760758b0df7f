#include "common/plugin_cache.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "common/settings.h"

namespace gpuscope::plugin_cache {

std::string cache_dir() {
  if (const char* dir = settings::text(settings::Id::kCacheDir)) return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/gpuscope";
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
  if (out.empty() || out == "." || out == "..") return {};
  return out;
}

std::string torch_plugin_path(std::string_view torch_version) {
  const std::string dir = cache_dir(), name = folder_name(torch_version);
  if (dir.empty() || name.empty()) return {};
  return dir + "/torch/" + name + "/libgpuscope_torch.so";
}

namespace {

std::string version_in(const std::string& version_py) {
  std::ifstream in(version_py);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("__version__", 0) != 0) continue;
    const auto open = line.find_first_of("'\"");
    if (open == std::string::npos) return {};
    const auto close = line.find(line[open], open + 1);
    if (close == std::string::npos) return {};
    return line.substr(open + 1, close - open - 1);
  }
  return {};
}

}  // namespace

std::string torch_version_of_process(const std::vector<std::string>& loaded) {
  for (const auto& path : loaded) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string dir = path.substr(0, slash), base = path.substr(slash + 1);
    std::string version;
    if (base.rfind("_C.", 0) == 0 && dir.size() >= 6 && dir.compare(dir.size() - 6, 6, "/torch") == 0)
      version = version_in(dir + "/version.py");
    else if (base.rfind("libtorch_cpu.so", 0) == 0)
      version = version_in(dir + "/../version.py");
    if (!version.empty()) return version;
  }
  return {};
}

}  // namespace gpuscope::plugin_cache
