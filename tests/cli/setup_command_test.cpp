// `gpuscope setup torch` end to end, on a fake python (a script that says
// which torch it has) and a fake cache: reuse without any tool, a torch
// upgrade noticed, no compiler said in one line. The real build, shared by the
// tests that need it, is the CTest fixture setup_torch_build
// (tests/cli/setup/CMakeLists.txt; its checks: setup/built_plugin_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

// A python whose torch is `version`, with Debian's torch package behind it.
class FakeSetup {
 public:
  explicit FakeSetup(const std::string& version) {
    fs::create_directories(dir_.file("bin"));
    write_file(dir_.file("bin/python"), "#!/bin/sh\necho torch_version=" + version +
                                            "\necho package=/usr/lib/python3/dist-packages/torch\n"
                                            "echo cmake_prefix=/usr/lib/python3/dist-packages/torch/share/cmake\n"
                                            "echo cxx11_abi=1\necho multiarch=x86_64-linux-gnu\n");
    fs::permissions(dir_.file("bin/python"), fs::perms::owner_all);
  }
  // Puts a (fake) plugin into the cache for `version`.
  void cached(const std::string& version) {
    fs::create_directories(dir_.file("cache/torch/" + version));
    write_file(dir_.file("cache/torch/" + version + "/libgpuscope_torch.so"), "built earlier");
  }
  // `GPUSCOPE_BIN setup torch --python <fake> ARGS` with the cache here and `env` (env -i).
  Result setup(const std::string& args, const std::string& env, const std::string& gpuscope_bin = bin()) const {
    return run("env -i HOME=" + dir_.path() + " GPUSCOPE_CACHE_DIR=" + dir_.file("cache") + " " + env + " " +
               gpuscope_bin + " setup torch --python " + dir_.file("bin/python") + " " + args);
  }
  std::string file(const std::string& name) const { return dir_.file(name); }

 private:
  TempDir dir_;
};

// A second run for the same torch does nothing, needs no tool, and says so.
TEST(SetupTorch, ReusesTheCachedPluginWithoutAnyTool) {
  FakeSetup m("2.11.0+cu130");
  m.cached("2.11.0+cu130");
  Result r = m.setup("", "PATH=/nonexistent CXX=/nonexistent/c++");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "torch 2.11.0+cu130 (" + m.file("bin/python") + "): reusing " +
                          m.file("cache/torch/2.11.0+cu130/libgpuscope_torch.so") +
                          ", built earlier for this torch (--force builds it again)\n");
  EXPECT_EQ(read_file(m.file("cache/torch/2.11.0+cu130/libgpuscope_torch.so")), "built earlier");
  // --force does not reuse (and here finds no compiler).
  r = m.setup("--force", "PATH=/nonexistent CXX=/nonexistent/c++");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

// A torch upgrade: the cache held the old torch's plugin; a new entry is
// built beside it. (Here the build stops at once: this gpuscope has no
// share/gpuscope/torch-plugin beside it.)
TEST(SetupTorch, AnUpgradeIsNoticed) {
  FakeSetup m("2.12.0+cu130");
  m.cached("2.11.0+cu130");
  fs::create_directories(m.file("alone/bin"));
  fs::copy_file(bin(), m.file("alone/bin/gpuscope"));
  Result r = m.setup("", "PATH=/usr/bin:/bin", m.file("alone/bin/gpuscope"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(
      r.has("\nthe plugin cache held a plugin for torch 2.11.0+cu130, not for 2.12.0+cu130 (torch upgraded?): "
            "building one for 2.12.0+cu130 beside it\n"))
      << r.output;
  EXPECT_TRUE(r.has("gpuscope: error: setup torch: the plugin's sources are not in " +
                    m.file("alone/share/gpuscope/torch-plugin")))
      << r.output;
  EXPECT_FALSE(fs::exists(m.file("cache/torch/2.12.0+cu130"))) << "nothing half-built in the cache";
  EXPECT_TRUE(fs::exists(m.file("cache/torch/2.11.0+cu130/libgpuscope_torch.so"))) << "the old entry stays";
}

// No compiler: one line, naming it and what it costs, and a failing exit.
TEST(SetupTorch, NoCompilerIsOneLine) {
  FakeSetup m("2.11.0+cu130");
  fs::create_directories(m.file("tools"));
  for (const char* tool : {"cmake", "make"})
    fs::create_symlink("/usr/bin/" + std::string(tool), m.file("tools/") + tool);
  Result r = m.setup("", "PATH=" + m.file("tools"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "gpuscope: error: setup torch: cannot build the torch plugin without a C++ compiler (no c++, "
            "g++ or clang++ on PATH, CXX unset) (Ubuntu: apt-get install g++ make cmake); until then jobs "
            "are recorded without torch ops\n");
  r = m.setup("", "PATH=/usr/bin:/bin CXX=/opt/none/g++");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("without the C++ compiler CXX=/opt/none/g++ (command not found)")) << r.output;
  EXPECT_FALSE(fs::exists(m.file("cache/torch"))) << "nothing written to the cache";
}

TEST(SetupTorch, PythonMissingOrWithoutTorch) {
  Result r = gpuscope("setup torch --python /no/such/python");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "gpuscope: error: setup torch: /no/such/python: command not found (pass --python the python "
            "your jobs run)\n");
  TempDir dir;
  write_file(dir.file("python"), "#!/bin/sh\necho \"torch_error=ModuleNotFoundError: No module named 'torch'\"\n");
  fs::permissions(dir.file("python"), fs::perms::owner_all);
  r = gpuscope("setup torch --python " + dir.file("python"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(r.has("cannot import torch (ModuleNotFoundError: No module named 'torch')")) << r.output;
  EXPECT_EQ(gpuscope("setup").exit_code, 2) << "setup wants what to set up";
}

}  // namespace
}  // namespace gpuscope::cli::test
