// The per-user cache of torch plugins (common/plugin_cache.h): where it is,
// how a version names its folder, and how the torch version of a process is
// read from the paths of what it loaded.
#include "common/plugin_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpuscope::plugin_cache {
namespace {

namespace fs = std::filesystem;

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }
  const char* name_;
  std::string old_;
  bool had_ = false;
};

TEST(PluginCache, FolderFromTheSettingThenXdgThenHome) {
  ScopedEnv home("HOME", "/home/u"), xdg("XDG_CACHE_HOME", nullptr), own("GPUSCOPE_CACHE_DIR", nullptr);
  EXPECT_EQ(cache_dir(), "/home/u/.cache/gpuscope");
  {
    ScopedEnv x("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(cache_dir(), "/xdg/gpuscope");
    ScopedEnv g("GPUSCOPE_CACHE_DIR", "/opt/cache");
    EXPECT_EQ(cache_dir(), "/opt/cache");
    EXPECT_EQ(torch_plugin_path("2.11.0+cu130"), "/opt/cache/torch/2.11.0+cu130/libgpuscope_torch.so");
  }
  ScopedEnv nohome("HOME", nullptr);
  EXPECT_EQ(cache_dir(), "");
  EXPECT_EQ(torch_plugin_path("2.11.0"), "");
}

TEST(PluginCache, VersionsAreSafeFolderNames) {
  EXPECT_EQ(folder_name("2.11.0+cu130"), "2.11.0+cu130");
  EXPECT_EQ(folder_name("1.13.0a0"), "1.13.0a0");
  EXPECT_EQ(folder_name("../../etc"), ".._.._etc");
  EXPECT_EQ(folder_name("2.1 dev/x"), "2.1_dev_x");
  EXPECT_EQ(folder_name(".."), "");
  EXPECT_EQ(folder_name(""), "");
}

TEST(PluginCache, TorchVersionFromWhatTheProcessLoaded) {
  const fs::path root = fs::temp_directory_path() / ("plugin_cache_test_" + std::to_string(getpid()));
  fs::create_directories(root / "pip/torch/lib");
  fs::create_directories(root / "debian/torch");
  std::ofstream(root / "pip/torch/version.py") << "from typing import Optional\n__version__ = '2.11.0+cu130'\n";
  std::ofstream(root / "debian/torch/version.py") << "__version__ = \"1.13.0a0\"\ndebug = False\n";
  const std::string pip_lib = (root / "pip/torch/lib/libtorch_cpu.so").string();
  const std::string debian_ext = (root / "debian/torch/_C.cpython-311-x86_64-linux-gnu.so").string();
  // pip and conda: the libraries sit in <torch>/lib.
  EXPECT_EQ(torch_version_of_process({"/usr/lib/libc.so.6", pip_lib}), "2.11.0+cu130");
  // Debian: libtorch_cpu.so in /usr/lib, version.py beside the extension.
  EXPECT_EQ(torch_version_of_process({"/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13", debian_ext}), "1.13.0a0");
  // No torch, or a torch without version.py: unknown.
  EXPECT_EQ(torch_version_of_process({"/usr/lib/libc.so.6"}), "");
  EXPECT_EQ(torch_version_of_process({(root / "other/_C.so").string()}), "");
  fs::remove_all(root);
}

}  // namespace
}  // namespace gpuscope::plugin_cache
