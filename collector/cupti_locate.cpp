#include "collector/cupti_locate.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "trace_formats/common/settings.h"

namespace gpuscope::collector {
namespace {

namespace fs = std::filesystem;

const char* const kNames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool is_cuda_library(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') + 1);
  for (const char* lib : {"libcudart.so", "libcublas.so", "libcupti.so", "libnvrtc.so", "libcudnn.so"})
    if (base.rfind(lib, 0) == 0) return true;
  return false;
}

// A pip wheel puts CUDA in site-packages/nvidia/<package>/lib (cu12 wheels:
// cuda_runtime, cuda_cupti, ...; cu13 wheels: cu13). Every such folder.
void add_wheel_dirs(const std::string& lib_dir, std::vector<std::string>& dirs) {
  const auto at = lib_dir.rfind("/nvidia/");
  if (at == std::string::npos) return;
  const std::string nvidia = lib_dir.substr(0, at + 8);
  dirs.push_back(nvidia + "cuda_cupti/lib");
  std::error_code ec;
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(nvidia, ec))
    if (fs::is_directory(e.path() / "lib", ec)) found.push_back((e.path() / "lib").string());
  std::sort(found.begin(), found.end());
  dirs.insert(dirs.end(), found.begin(), found.end());
}

}  // namespace

std::vector<std::string> cupti_candidates(const CuptiSearch& s) {
  std::vector<std::string> dirs;
  for (const auto& path : s.loaded) {
    if (!is_cuda_library(path)) continue;
    const std::string dir = parent_of(path);
    add_wheel_dirs(dir, dirs);
    dirs.push_back(dir);                                 // conda, a toolkit's lib64
    dirs.push_back(parent_of(dir) + "/extras/CUPTI/lib64");  // the toolkit root above lib64
  }
  dirs.insert(dirs.end(), s.extra_dirs.begin(), s.extra_dirs.end());
  for (const auto& d : s.extra_dirs) add_wheel_dirs(d, dirs);
  if (!s.conda_prefix.empty()) dirs.push_back(s.conda_prefix + "/lib");

  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& c) {
    if (seen.insert(c).second) out.push_back(c);
  };
  if (!s.env_path.empty()) add(s.env_path);
  for (const auto& d : dirs)
    for (const char* n : kNames) add(d + "/" + n);
  for (const char* n : kNames) add(n);
  for (const auto& root : s.cuda_roots)
    for (const char* sub : {"/extras/CUPTI/lib64/", "/lib64/", "/targets/x86_64-linux/lib/"})
      for (const char* n : kNames) add(root + sub + n);
  return out;
}

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> paths;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && info->dlpi_name[0] == '/')
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &paths);
  return paths;
}

CuptiSearch this_process_search(std::vector<std::string> extra_dirs) {
  CuptiSearch s;
  if (const char* env = settings::raw(settings::Id::kCupti)) s.env_path = env;
  s.loaded = loaded_libraries();
  s.extra_dirs = std::move(extra_dirs);
  if (const char* conda = std::getenv("CONDA_PREFIX")) s.conda_prefix = conda;
  s.cuda_roots.push_back("/usr/local/cuda");
  std::error_code ec;
  std::vector<std::string> versions;
  for (const auto& e : fs::directory_iterator("/usr/local", ec))
    if (e.path().filename().string().rfind("cuda-", 0) == 0) versions.push_back(e.path().string());
  // Newest first: cuda-13.0 before cuda-12.8 before cuda-12.10 is not what
  // sort gives, so compare the numbers.
  auto key = [](const std::string& p) {
    std::vector<int> v;
    const std::string t = p.substr(p.rfind('-') + 1);
    size_t i = 0;
    while (i < t.size()) {
      v.push_back(std::atoi(t.c_str() + i));
      const auto dot = t.find('.', i);
      if (dot == std::string::npos) break;
      i = dot + 1;
    }
    return v;
  };
  std::sort(versions.begin(), versions.end(), [&](const auto& a, const auto& b) { return key(a) > key(b); });
  s.cuda_roots.insert(s.cuda_roots.end(), versions.begin(), versions.end());
  return s;
}

void* open_cupti(const std::vector<std::string>& extra_dirs) {
  for (const char* n : kNames)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_NOLOAD)) return h;
  for (const auto& c : cupti_candidates(this_process_search(extra_dirs))) {
    // A full path that is not there: skip it without asking the loader.
    if (c.find('/') != std::string::npos && access(c.c_str(), R_OK) != 0) continue;
    if (void* h = dlopen(c.c_str(), RTLD_NOW)) return h;
  }
  return nullptr;
}

}  // namespace gpuscope::collector
