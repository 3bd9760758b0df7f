// The plugin cache and the torch plugin's lookup order (common/plugin_cache.h),
// shared by the collector, doctor and setup: the cache folder from the
// environment, version folder names, the torch version of a process from
// fake pip, Debian and libtorch-archive trees, and the candidates' order.
#include "trace_formats/common/plugin_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::plugin_cache {
namespace {

namespace fs = std::filesystem;

struct Folder {
  Folder() {
    path =
        (fs::temp_directory_path() / ("plugin_cache_" + std::to_string(getpid()) + "_" + std::to_string(n++))).string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  // Writes `text` to `name` (folders created), returns its path.
  std::string put(const std::string& name, const std::string& text = "") const {
    const fs::path p = fs::path(path) / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path;
  static inline int n = 0;
};

using cli::test::ScopedEnv;

TEST(PluginCache, FolderFromTheEnvironment) {
  ScopedEnv home("HOME", "/home/u");
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv own("GPUSCOPE_CACHE_DIR", nullptr);
  EXPECT_EQ(cache_dir(), "/home/u/.cache/gpuscope");
  {
    ScopedEnv x("XDG_CACHE_HOME", "/scratch/cache");
    EXPECT_EQ(cache_dir(), "/scratch/cache/gpuscope");
    ScopedEnv relative("XDG_CACHE_HOME", "cache");  // the XDG spec: relative paths are ignored
    EXPECT_EQ(cache_dir(), "/home/u/.cache/gpuscope");
    ScopedEnv g("GPUSCOPE_CACHE_DIR", "/fast/gpuscope-cache");
    EXPECT_EQ(cache_dir(), "/fast/gpuscope-cache");
  }
  ScopedEnv nohome("HOME", nullptr);
  EXPECT_EQ(cache_dir(), "") << "no HOME and nothing set: no cache";
}

TEST(PluginCache, VersionsAsFolderNames) {
  EXPECT_EQ(folder_name("2.11.0+cu130"), "2.11.0+cu130");
  EXPECT_EQ(folder_name("2.6.0.dev20241112+cu124"), "2.6.0.dev20241112+cu124");
  EXPECT_EQ(folder_name("1.13.0a0"), "1.13.0a0");
  EXPECT_EQ(folder_name("../../etc"), "_._.._etc");
  EXPECT_EQ(folder_name(".."), "_.");
  EXPECT_EQ(folder_name("2.1 beta/x"), "2.1_beta_x");
  EXPECT_EQ(folder_name(""), "");
  EXPECT_EQ(torch_plugin_path("/c", "2.11.0+cu130"), "/c/torch/2.11.0+cu130/libgpuscope_torch.so");
  EXPECT_EQ(torch_plugin_path("", "2.11.0"), "");
  EXPECT_EQ(torch_plugin_path("/c", ""), "");
}

TEST(PluginCache, EntriesWithAPlugin) {
  Folder f;
  f.put("torch/2.9.1/libgpuscope_torch.so", "x");
  f.put("torch/2.11.0+cu130/libgpuscope_torch.so", "x");
  f.put("torch/2.10.0/setup.log", "a folder without a plugin");
  f.put("torch/.build-123-abc/libgpuscope_torch.so", "a build under way");
  EXPECT_EQ(cached_torch_versions(f.path), (std::vector<std::string>{"2.11.0+cu130", "2.9.1"}));
  EXPECT_TRUE(cached_torch_versions(f.path + "/none").empty());
  EXPECT_TRUE(cached_torch_versions("").empty());
}

TEST(PluginCache, VersionPyForms) {
  Folder f;
  EXPECT_EQ(read_version_py(f.put("a.py",
                                  "from typing import Optional\n__all__ = ['__version__']\n"
                                  "__version__ = '2.11.0+cu130'\ndebug = False\n")),
            "2.11.0+cu130");
  EXPECT_EQ(read_version_py(f.put("b.py", "__version__: str = \"2.8.0\"\n")), "2.8.0");
  EXPECT_EQ(read_version_py(f.put("c.py", "version = '1'\n")), "");
  EXPECT_EQ(read_version_py(f.path + "/missing.py"), "");
}

TEST(PluginCache, TorchVersionOfAPipInstall) {
  Folder f;
  const std::string lib = f.put("site-packages/torch/lib/libtorch_cpu.so");
  f.put("site-packages/torch/version.py", "__version__ = '2.11.0+cu130'\n");
  EXPECT_EQ(torch_version_near(lib), "2.11.0+cu130");
  EXPECT_EQ(torch_version_of_libraries({"/lib/x86_64-linux-gnu/libc.so.6", lib}), "2.11.0+cu130");
}

// Debian: libtorch_cpu.so in /usr/lib/<multiarch>/, version.py beside the _C
// extension in the Python package.
TEST(PluginCache, TorchVersionOfDebiansTorchComesFromItsExtension) {
  Folder f;
  const std::string lib = f.put("usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13");
  const std::string ext = f.put("dist-packages/torch/_C.cpython-311-x86_64-linux-gnu.so");
  f.put("dist-packages/torch/version.py", "__version__ = '1.13.0a0'\n");
  EXPECT_EQ(torch_version_near(lib), "") << "nothing beside Debian's libtorch_cpu.so";
  EXPECT_EQ(torch_version_near(ext), "1.13.0a0");
  EXPECT_EQ(torch_version_of_libraries({lib, ext}), "1.13.0a0");
  EXPECT_EQ(torch_version_of_libraries({lib}), "") << "a C++ program linked against Debian's libtorch";
  // Another package's _C is not torch's.
  const std::string other = f.put("dist-packages/other/_C.so");
  f.put("dist-packages/other/version.py", "__version__ = '9.9'\n");
  EXPECT_EQ(torch_version_of_libraries({lib, other}), "");
}

TEST(PluginCache, TorchVersionOfTheLibtorchArchive) {
  Folder f;
  const std::string lib = f.put("libtorch/lib/libtorch_cpu.so");
  f.put("libtorch/build-version", "2.11.0+cu130\n");
  EXPECT_EQ(torch_version_of_libraries({lib}), "2.11.0+cu130");
}

TEST(PluginCache, LookupOrder) {
  auto paths = [](const std::vector<Candidate>& c) {
    std::vector<std::string> out;
    for (const auto& x : c) out.push_back(x.path + " " + origin_name(x.origin));
    return out;
  };
  EXPECT_EQ(paths(torch_plugin_candidates("", "/c", "2.11.0+cu130", "/opt/gpuscope/lib/gpuscope")),
            (std::vector<std::string>{"/c/torch/2.11.0+cu130/libgpuscope_torch.so the plugin cache",
                                      "/opt/gpuscope/lib/gpuscope/libgpuscope_torch.so next to the collector"}));
  EXPECT_EQ(paths(torch_plugin_candidates("/my/plugin.so", "/c", "2.11.0", "/opt/lib")),
            (std::vector<std::string>{"/my/plugin.so GPUSCOPE_TORCH_PLUGIN"}))
      << "the variable is the only candidate";
  EXPECT_EQ(paths(torch_plugin_candidates("", "/c", "", "/opt/lib")),
            (std::vector<std::string>{"/opt/lib/libgpuscope_torch.so next to the collector"}))
      << "torch's version unknown: no cache entry";
  EXPECT_EQ(paths(torch_plugin_candidates("", "", "2.11.0", "")), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuscope::plugin_cache
