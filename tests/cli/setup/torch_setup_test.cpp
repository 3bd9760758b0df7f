// The steps of `gpuscope setup torch` (cli/setup/torch_setup.h) on faked
// machines: what the Python says, where torch's CMake config is, what a run
// does with the cache (reuse, --force, an upgrade), and what is missing.
#include "cli/setup/torch_setup.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "trace_formats/common/error.h"
#include "tests/cli/cli_test_util.h"

namespace gpuscope::setup {
namespace {

using cli::test::TempDir;
using cli::test::ScopedEnv;
using cli::test::write_file;
namespace fs = std::filesystem;


std::string put(const TempDir& dir, const std::string& name, const std::string& text = "") {
  fs::create_directories(fs::path(dir.file(name)).parent_path());
  write_file(dir.file(name), text);
  return dir.file(name);
}

// An executable script standing in for a program.
std::string program(const TempDir& dir, const std::string& name, const std::string& body = "exit 0\n") {
  const std::string p = put(dir, name, "#!/bin/sh\n" + body);
  fs::permissions(p, fs::perms::owner_all);
  return p;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SetupTorch, WhatThePythonSays) {
  TorchInfo t = parse_torch_info(
      "Some warning the interpreter printed\ntorch_version=2.11.0+cu130\npackage=/venv/site/torch\n"
      "cmake_prefix=/venv/site/torch/share/cmake\ncxx11_abi=1\nmultiarch=x86_64-linux-gnu\n");
  EXPECT_EQ(t.version, "2.11.0+cu130");
  EXPECT_EQ(t.package, "/venv/site/torch");
  EXPECT_EQ(t.cmake_prefix, "/venv/site/torch/share/cmake");
  EXPECT_EQ(t.cxx11_abi, "1");
  EXPECT_EQ(t.multiarch, "x86_64-linux-gnu");
  EXPECT_EQ(parse_torch_info("torch_error=ModuleNotFoundError: No module named 'torch'\n").error,
            "ModuleNotFoundError: No module named 'torch'");
}

TEST(SetupTorch, APythonWithoutTorchOrThatFails) {
  TempDir dir;
  const std::string no_torch =
      program(dir, "no_torch", "echo \"torch_error=ModuleNotFoundError: No module named 'torch'\"\n");
  EXPECT_EQ(error_of([&] { ask_python(no_torch, 10000); }),
            "setup torch: " + no_torch +
                " cannot import torch (ModuleNotFoundError: No module named 'torch'): pass --python the python your "
                "jobs run");
  const std::string broken = program(dir, "broken", "echo 'Fatal Python error: init' >&2\nexit 3\n");
  EXPECT_EQ(error_of([&] { ask_python(broken, 10000); }),
            "setup torch: " + broken + " failed (exit 3): Fatal Python error: init");
}

TEST(SetupTorch, TorchDirFromThePythonTheGivenFolderOrDebians) {
  TempDir dir;
  put(dir, "site/torch/share/cmake/Torch/TorchConfig.cmake");
  TorchInfo t;
  t.cmake_prefix = dir.file("site/torch/share/cmake");
  EXPECT_EQ(find_torch_dir(t, ""), dir.file("site/torch/share/cmake/Torch"));
  // --torch-dir: the folder itself, or a prefix (a libtorch archive's root).
  put(dir, "libtorch/share/cmake/Torch/TorchConfig.cmake");
  EXPECT_EQ(find_torch_dir(t, dir.file("libtorch")), dir.file("libtorch/share/cmake/Torch"));
  EXPECT_EQ(find_torch_dir(t, dir.file("libtorch/share/cmake/Torch")), dir.file("libtorch/share/cmake/Torch"));
  EXPECT_EQ(error_of([&] { find_torch_dir(t, dir.file("nothing")); }),
            "setup torch: --torch-dir " + dir.file("nothing") +
                " holds no TorchConfig.cmake (nor Torch/ or share/cmake/Torch/)");
  // Debian's python3-torch has no CMake files; libtorch-dev's are in /usr/lib/<multiarch>.
  t.cmake_prefix = dir.file("dist-packages/torch/share/cmake");
  t.multiarch = "no-such-arch";
  EXPECT_EQ(find_torch_dir(t, ""), "");
  if (fs::exists("/usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake")) {
    t.multiarch = "x86_64-linux-gnu";
    EXPECT_EQ(find_torch_dir(t, ""), "/usr/lib/x86_64-linux-gnu/cmake/Torch");
  }
}

TEST(SetupTorch, TorchDirVersion) {
  TempDir dir;
  put(dir, "Torch/TorchConfigVersion.cmake", "set(PACKAGE_VERSION \"2.11.0\")\n\n# Check whether ...\n");
  EXPECT_EQ(torch_dir_version(dir.file("Torch")), "2.11.0");
  EXPECT_EQ(torch_dir_version(dir.file("none")), "");
}

// A second run reuses; --force builds again; another torch version is an
// entry of its own, and the others are named (an upgrade is noticed).
TEST(SetupTorch, WhatARunDoesWithTheCache) {
  TempDir dir;
  const std::string cache = dir.file("cache");
  Plan p = plan(cache, "2.11.0+cu130", false);
  EXPECT_EQ(p.plugin, cache + "/torch/2.11.0+cu130/libgpuscope_torch.so");
  EXPECT_FALSE(p.reuse);
  EXPECT_TRUE(p.others.empty());
  put(dir, "cache/torch/2.11.0+cu130/libgpuscope_torch.so", "built");
  EXPECT_TRUE(plan(cache, "2.11.0+cu130", false).reuse);
  EXPECT_FALSE(plan(cache, "2.11.0+cu130", true).reuse);
  p = plan(cache, "2.12.0+cu130", false);
  EXPECT_FALSE(p.reuse);
  EXPECT_EQ(p.plugin, cache + "/torch/2.12.0+cu130/libgpuscope_torch.so");
  EXPECT_EQ(p.others, std::vector<std::string>{"2.11.0+cu130"});
  EXPECT_EQ(error_of([&] { plan("", "2.11.0", false); }),
            "setup torch: no cache folder: HOME is not set; set GPUSCOPE_CACHE_DIR");
}

TEST(SetupTorch, ToolsFromPathCxxAndTheVenv) {
  TempDir dir;
  program(dir, "bin/cmake");
  program(dir, "bin/make");
  program(dir, "bin/g++");
  program(dir, "venv/bin/cmake");
  ScopedEnv path("PATH", dir.file("bin").c_str());
  ScopedEnv cxx("CXX", nullptr);
  Tools t = find_tools("");
  EXPECT_EQ(t.cmake, dir.file("bin/cmake"));
  EXPECT_EQ(t.cxx, dir.file("bin/g++"));
  EXPECT_EQ(t.generator, "Unix Makefiles");
  program(dir, "bin/ninja");
  program(dir, "cc/clang++");
  ScopedEnv clang("CXX", (dir.file("cc/clang++") + " -stdlib=libstdc++").c_str());
  t = find_tools("");
  EXPECT_EQ(t.cxx, dir.file("cc/clang++"));
  EXPECT_EQ(t.generator, "Ninja");
  fs::remove(dir.file("bin/cmake"));
  EXPECT_EQ(find_tools(dir.file("venv/bin")).cmake, dir.file("venv/bin/cmake")) << "a venv's pip-installed cmake";
}

// What is missing, all of it, in one line that says what it costs.
TEST(SetupTorch, MissingToolsInOneLine) {
  TempDir dir;
  program(dir, "bin/cmake");
  ScopedEnv path("PATH", dir.file("bin").c_str());
  ScopedEnv cxx("CXX", nullptr);
  const std::string e = error_of([] { find_tools(""); });
  EXPECT_EQ(e,
            "setup torch: cannot build the torch plugin without a C++ compiler (no c++, g++ or clang++ on PATH, "
            "CXX unset) and make or ninja (Ubuntu: apt-get install g++ make cmake); until then jobs are recorded "
            "without torch ops");
  program(dir, "bin/make");
  ScopedEnv gone("CXX", "/nonexistent/g++-14");
  EXPECT_EQ(error_of([] { find_tools(""); }),
            "setup torch: cannot build the torch plugin without the C++ compiler CXX=/nonexistent/g++-14 (command "
            "not found) (Ubuntu: apt-get install g++ make cmake); until then jobs are recorded without torch ops");
}

TEST(SetupTorch, SourcesBesideTheBinary) {
  TempDir dir;
  EXPECT_TRUE(error_of([&] {
                find_sources(dir.file("bin"));
              }).find("the plugin's sources are not in " + dir.file("share/gpuscope/torch-plugin")) !=
              std::string::npos);
  put(dir, "share/gpuscope/torch-plugin/CMakeLists.txt");
  put(dir, "share/gpuscope/torch-plugin/plugins/torch/plugin_init.cpp");
  EXPECT_EQ(find_sources(dir.file("bin")), dir.file("share/gpuscope/torch-plugin"));
  // This build tree has the installed layout.
  EXPECT_EQ(find_sources(std::string(GPUSCOPE_BINARY_DIR) + "/bin"),
            std::string(GPUSCOPE_BINARY_DIR) + "/share/gpuscope/torch-plugin");
}

}  // namespace
}  // namespace gpuscope::setup
