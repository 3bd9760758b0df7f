// `gpuscope doctor` end to end, in an emptied environment whose driver, NVML,
// CUPTI, collector, plugin and torch are all fakes (tests/cli/doctor/).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

// A machine where every check passes: fakes linked under their real names.
class FakeMachine {
 public:
  FakeMachine() {
    fs::create_directories(dir_.file("lib"));
    fs::create_directories(dir_.file("gpuscope"));
    fs::create_directories(dir_.file("site/torch"));
#ifdef FAKE_CUDA_PATH
    fs::create_symlink(FAKE_CUDA_PATH, dir_.file("lib/libcuda.so.1"));
#endif
    fs::create_symlink(FAKE_NVML_PATH, dir_.file("lib/libnvidia-ml.so.1"));
    write_file(dir_.file("gpuscope/libgpuscope_collector.so"), "stands in for the collector");
    fs::create_symlink(FAKE_PLUGIN_PATH, dir_.file("gpuscope/libgpuscope_torch.so"));
    write_file(dir_.file("site/torch/__init__.py"), "__version__ = '2.11.0+cu130'\n");
  }

  // `gpuscope doctor ARGS` with only these variables (env -i) plus `extra`.
  Result doctor(const std::string& args, const std::string& extra = "", const std::string& redirect = "") const {
    std::string env = "env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH=" + dir_.file("lib") +
                      " GPUSCOPE_COLLECTOR=" + dir_.file("gpuscope/libgpuscope_collector.so") +
                      " PYTHONPATH=" + dir_.file("site");
#ifdef FAKE_CUPTI_PATH
    env += " GPUSCOPE_CUPTI=" FAKE_CUPTI_PATH;
#endif
    return run("{ " + env + " " + extra + " " + bin() + " doctor " + args + " " + redirect + "; }");
  }
  std::string dir() const { return dir_.path(); }

 private:
  TempDir dir_;
};

TEST(Doctor, AllOkWithFakes) {
#ifndef FAKE_CUDA_PATH
  GTEST_SKIP() << "no fake libcupti/libcuda in this build (GPUSCOPE_WITH_CUDA=OFF)";
#else
  FakeMachine m;
  Result r = m.doctor("--python /usr/bin/python3 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& c : j) by_name[c["check"]] = c;
  ASSERT_EQ(by_name.size(), 7u) << r.output;
  for (const char* name : {"driver", "cupti", "profiler", "collector", "torch", "nvml"})
    EXPECT_EQ(by_name[name]["status"], "ok") << name << ": " << by_name[name].dump();
  // The viewer is built or not with this build; either way it is no failure.
  EXPECT_EQ(by_name["viewer"]["ok"], true);
  EXPECT_NE(by_name["driver"]["detail"].get<std::string>().find("CUDA 13.0"), std::string::npos);
  EXPECT_EQ(by_name["cupti"]["detail"], std::string(FAKE_CUPTI_PATH) + " (CUPTI API 130000)");
  EXPECT_EQ(by_name["torch"]["detail"], "torch 2.11.0+cu130, plugin " + m.dir() +
                                            "/gpuscope/libgpuscope_torch.so built for 2.11.0 (next to the collector)");
  EXPECT_EQ(by_name["nvml"]["detail"], "2 GPUs, driver 575.57.08");
#endif
}

TEST(Doctor, AnotherProfilerFailsInOneTextLine) {
  FakeMachine m;
  Result r = m.doctor("--python /usr/bin/python3", "CUDA_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.lines(), 7) << r.output;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    EXPECT_TRUE(line.rfind("ok   ", 0) == 0 || line.rfind("warn ", 0) == 0 || line.rfind("FAIL ", 0) == 0) << line;
  EXPECT_TRUE(r.has("\nFAIL profiler: CUDA_INJECTION64_PATH=/opt/nsys/libToolsInjection64.so")) << r.output;
}

TEST(Doctor, MissingPythonFailsAndNothingGoesToStderr) {
  FakeMachine m;
  Result r = m.doctor("--python /no/such/python");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(r.has("FAIL torch: /no/such/python: not an executable")) << r.output;
  Result err = m.doctor("--python /no/such/python", "", "2>&1 >/dev/null");
  EXPECT_EQ(err.output, "");
}

// The plugin of `gpuscope setup torch`'s cache comes before the collector's.
TEST(Doctor, TorchPluginFromTheCache) {
  FakeMachine m;
  fs::create_directories(m.dir() + "/cache/torch/2.11.0+cu130");
  fs::copy_file(FAKE_PLUGIN_PATH, m.dir() + "/cache/torch/2.11.0+cu130/libgpuscope_torch.so");
  fs::remove(m.dir() + "/gpuscope/libgpuscope_torch.so");
  Result r = m.doctor("--python /usr/bin/python3", "GPUSCOPE_CACHE_DIR=" + m.dir() + "/cache");
  EXPECT_TRUE(r.has("\nok   torch: torch 2.11.0+cu130, plugin " + m.dir() +
                    "/cache/torch/2.11.0+cu130/libgpuscope_torch.so built for 2.11.0 (the plugin cache)\n"))
      << r.output;
}

// No plugin anywhere the collector looks: the line says to run setup torch.
TEST(Doctor, NoTorchPluginSaysRunSetupTorch) {
  FakeMachine m;
  fs::remove(m.dir() + "/gpuscope/libgpuscope_torch.so");
  Result r = m.doctor("--python /usr/bin/python3", "GPUSCOPE_CACHE_DIR=" + m.dir() + "/cache");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(r.has("FAIL torch: torch 2.11.0+cu130, but no plugin for it (looked at " + m.dir() +
                    "/cache/torch/2.11.0+cu130/libgpuscope_torch.so, " + m.dir() +
                    "/gpuscope/libgpuscope_torch.so): ops are not recorded \xE2\x80\x94 run `gpuscope setup torch "
                    "--python /usr/bin/python3`\n"))
      << r.output;
}

TEST(Doctor, BadFormatIsBadUse) {
  Result r = gpuscope("doctor --format xml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace gpuscope::cli::test
