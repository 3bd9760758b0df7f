// The real probes against fakes: libcuda.so.1 and libcupti from the collector's
// tests, a fake NVML, a fake `torch` module for the real python3 with fake
// plugins, and a viewer whose library the loader cannot find.
#include "cli/doctor/probes.h"
#include "collector/cupti_locate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <filesystem>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::doctor {
namespace {

using cli::test::TempDir;
using cli::test::write_file;

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// A folder holding torch/__init__.py with `body`, for PYTHONPATH.
std::string fake_torch(const TempDir& dir, const std::string& body) {
  std::filesystem::create_directories(dir.file("site/torch"));
  write_file(dir.file("site/torch/__init__.py"), body);
  return dir.file("site");
}

std::string python3() { return "/usr/bin/python3"; }

TEST(DoctorProbes, DriverMissing) {
  DriverProbe d = probe_driver("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(d.loaded);
  EXPECT_NE(d.load_error.find("/nonexistent/libcuda.so.1"), std::string::npos) << d.load_error;
}

TEST(DoctorProbes, DriverWithoutVersionQuery) {
  DriverProbe d = probe_driver(FAKE_NVML_PATH);  // loads, but is no libcuda
  EXPECT_TRUE(d.loaded);
  EXPECT_EQ(d.result, -1);
}

#ifdef FAKE_CUDA_PATH
TEST(DoctorProbes, DriverFake) {
  DriverProbe d = probe_driver(FAKE_CUDA_PATH);
  EXPECT_TRUE(d.loaded);
  EXPECT_EQ(d.result, 0);
  EXPECT_EQ(d.cuda_version, 13000);
}

TEST(DoctorProbes, CuptiThroughTheCollectorsSearch) {
  ScopedEnv cupti("GPUSCOPE_CUPTI", FAKE_CUPTI_PATH);
  CuptiProbe c = probe_cupti(PythonProbe{});
  ASSERT_TRUE(c.found);
  EXPECT_EQ(c.path, FAKE_CUPTI_PATH);
  EXPECT_EQ(c.result, 0);
  EXPECT_EQ(c.api_version, 130000u);
}
#endif

// The search order of collector/cupti_locate.h: GPUSCOPE_CUPTI, then the CUDA
// the job loaded (a pip wheel's nvidia/*/lib, a toolkit's lib64 and its
// extras/CUPTI), the caller's folders, conda, sonames, the CUDA installs.
TEST(CuptiSearch, WheelFoldersOfTheLoadedRuntimeComeFirst) {
  TempDir dir;
  const std::string nvidia = dir.file("site/nvidia");
  for (const char* pkg : {"cu13", "cublas", "cuda_cupti"})
    std::filesystem::create_directories(nvidia + "/" + pkg + "/lib");
  collector::CuptiSearch s;
  s.env_path = "/opt/my/libcupti.so";
  s.loaded = {"/usr/lib/libc.so.6", nvidia + "/cu13/lib/libcudart.so.13", "/opt/cuda-12.8/lib64/libcublas.so.12"};
  s.conda_prefix = "/conda";
  s.cuda_roots = {"/usr/local/cuda", "/usr/local/cuda-13.0"};
  const auto c = collector::cupti_candidates(s);
  auto at = [&](const std::string& path) {
    auto it = std::find(c.begin(), c.end(), path);
    EXPECT_NE(it, c.end()) << path << " not searched";
    return it - c.begin();
  };
  EXPECT_EQ(c.front(), "/opt/my/libcupti.so");
  EXPECT_EQ(at(nvidia + "/cuda_cupti/lib/libcupti.so.13"), 1);
  EXPECT_LT(at(nvidia + "/cu13/lib/libcupti.so.13"), at("/opt/cuda-12.8/lib64/libcupti.so.13"));
  EXPECT_LT(at("/opt/cuda-12.8/lib64/libcupti.so.13"), at("/opt/cuda-12.8/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_LT(at("/opt/cuda-12.8/extras/CUPTI/lib64/libcupti.so.13"), at("/conda/lib/libcupti.so.13"));
  EXPECT_LT(at("/conda/lib/libcupti.so.13"), at("libcupti.so.13"));
  EXPECT_LT(at("libcupti.so.13"), at("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_LT(at("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"),
            at("/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcupti.so.13"));
  // libc is no CUDA library: nothing searched beside it; nothing twice.
  EXPECT_EQ(std::count_if(c.begin(), c.end(), [](const auto& p) { return p.rfind("/usr/lib/", 0) == 0; }), 0);
  EXPECT_EQ(std::set<std::string>(c.begin(), c.end()).size(), c.size());
}

TEST(CuptiSearch, DoctorAddsThePythonsWheels) {
  TempDir dir;
  const std::string nvidia = dir.file("site/nvidia");
  std::filesystem::create_directories(nvidia + "/cu13/lib");
  collector::CuptiSearch s;
  s.extra_dirs = {nvidia + "/cuda_cupti/lib"};
  const auto c = collector::cupti_candidates(s);
  EXPECT_NE(std::find(c.begin(), c.end(), nvidia + "/cu13/lib/libcupti.so.13"), c.end());
  EXPECT_LT(std::find(c.begin(), c.end(), nvidia + "/cu13/lib/libcupti.so.13"),
            std::find(c.begin(), c.end(), "libcupti.so.13"));
}

TEST(DoctorProbes, NvmlFakeOkAndFailing) {
  NvmlProbe n = probe_nvml(FAKE_NVML_PATH);
  EXPECT_TRUE(n.loaded);
  EXPECT_EQ(n.init_result, 0);
  EXPECT_EQ(n.devices, 2u);
  EXPECT_EQ(n.driver_version, "575.57.08");
  ScopedEnv fail("FAKE_NVML_INIT", "9");
  n = probe_nvml(FAKE_NVML_PATH);
  EXPECT_EQ(n.init_result, 9);
  EXPECT_EQ(n.init_error, "Driver Not Loaded");
  EXPECT_FALSE(probe_nvml("/nonexistent/libnvidia-ml.so.1").loaded);
}

TEST(DoctorProbes, PluginNextToTheCollectorOrFromTheEnvironment) {
  PluginProbe p = probe_plugin({"/opt/gpuscope/lib/libgpuscope_collector.so", ""});
  EXPECT_EQ(p.path, "/opt/gpuscope/lib/libgpuscope_torch.so");
  EXPECT_FALSE(p.exists);
  ScopedEnv env("GPUSCOPE_TORCH_PLUGIN", FAKE_PLUGIN_PATH);
  p = probe_plugin({});
  EXPECT_EQ(p.path, FAKE_PLUGIN_PATH);
  EXPECT_TRUE(p.exists);
}

// The collector's order: GPUSCOPE_TORCH_PLUGIN, the cache of `gpuscope setup
// torch` for the job's torch version, next to the collector.
TEST(DoctorProbes, PluginFromTheCacheOfThisTorchVersion) {
  TempDir dir;
  ScopedEnv cache("GPUSCOPE_CACHE_DIR", dir.path().c_str());
  std::filesystem::create_directories(dir.file("torch/2.11.0+cu130"));
  write_file(dir.file("torch/2.11.0+cu130/libgpuscope_torch.so"), "built by setup torch");
  const CollectorProbe collector{"/opt/gpuscope/lib/libgpuscope_collector.so", ""};
  PluginProbe p = probe_plugin(collector, "2.11.0+cu130");
  EXPECT_EQ(p.path, dir.file("torch/2.11.0+cu130/libgpuscope_torch.so"));
  EXPECT_TRUE(p.exists);
  // Another torch (an upgrade not set up yet): back to the collector's folder.
  p = probe_plugin(collector, "2.12.0+cu130");
  EXPECT_EQ(p.path, "/opt/gpuscope/lib/libgpuscope_torch.so");
  EXPECT_FALSE(p.exists);
  ScopedEnv env("GPUSCOPE_TORCH_PLUGIN", FAKE_PLUGIN_PATH);
  EXPECT_EQ(probe_plugin(collector, "2.11.0+cu130").path, FAKE_PLUGIN_PATH);
}

TEST(DoctorProbes, PythonWithTorchLoadsThePlugin) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "__version__ = '2.11.0+cu130'\n"));
  PythonProbe py = probe_python(python3(), false, {FAKE_PLUGIN_PATH, true}, 30000);
  EXPECT_TRUE(py.found);
  EXPECT_EQ(py.torch_version, "2.11.0+cu130") << py.error;
  EXPECT_TRUE(py.plugin_tried);
  EXPECT_EQ(py.plugin_error, "");
  EXPECT_TRUE(py.plugin_says);
  EXPECT_EQ(py.plugin_built_for, "2.11.0");
  EXPECT_EQ(check_torch_plugin(py, {FAKE_PLUGIN_PATH, true}, {}).status, Status::kOk);
  py = probe_python(python3(), false, {FAKE_PLUGIN_OLD_PATH, true}, 30000);
  EXPECT_EQ(py.plugin_built_for, "2.9.1");
  EXPECT_EQ(check_torch_plugin(py, {FAKE_PLUGIN_OLD_PATH, true}, {}).status, Status::kFail);
}

TEST(DoctorProbes, PluginThatDoesNotLoad) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "__version__ = '2.11.0'\n"));
  write_file(dir.file("libgpuscope_torch.so"), "not an ELF file");
  PythonProbe py = probe_python(python3(), false, {dir.file("libgpuscope_torch.so"), true}, 30000);
  EXPECT_EQ(py.torch_version, "2.11.0");
  EXPECT_NE(py.plugin_error.find("libgpuscope_torch.so"), std::string::npos) << py.plugin_error;
  EXPECT_FALSE(py.plugin_says);
}

TEST(DoctorProbes, PythonWithoutTorch) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "raise ModuleNotFoundError(\"No module named 'torch'\")\n"));
  PythonProbe py = probe_python(python3(), true, {FAKE_PLUGIN_PATH, true}, 30000);
  EXPECT_EQ(py.torch_version, "");
  EXPECT_EQ(py.torch_error, "ModuleNotFoundError: No module named 'torch'");
  EXPECT_EQ(check_torch_plugin(py, {FAKE_PLUGIN_PATH, true}, {}).status, Status::kWarn);
}

TEST(DoctorProbes, PythonMissingOrHanging) {
  PythonProbe py = probe_python("", true, {}, 1000);
  EXPECT_FALSE(py.found);
  TempDir dir;
  write_file(dir.file("python"), "#!/bin/sh\nsleep 30\n");
  std::filesystem::permissions(dir.file("python"), std::filesystem::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  py = probe_python(dir.file("python"), true, {}, 300);
  EXPECT_TRUE(py.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(check_torch_plugin(py, {}, {}).status, Status::kFail);
}

TEST(DoctorProbes, PythonThatFails) {
  TempDir dir;
  write_file(dir.file("python"), "#!/bin/sh\necho 'Fatal Python error: init' >&2\nexit 3\n");
  std::filesystem::permissions(dir.file("python"), std::filesystem::perms::owner_all);
  PythonProbe py = probe_python(dir.file("python"), true, {}, 10000);
  EXPECT_EQ(py.exit_code, 3);
  EXPECT_EQ(py.error, "Fatal Python error: init");
  EXPECT_EQ(check_torch_plugin(py, {}, {}).status, Status::kFail);
}

TEST(DoctorProbes, ViewerMissingItsLibrary) {
  ViewerProbe v = probe_viewer(FAKE_VIEWER_PATH);
  EXPECT_TRUE(v.exists);
  EXPECT_TRUE(v.ldd_ran);
  ASSERT_EQ(v.missing.size(), 1u);
  EXPECT_EQ(v.missing[0], "libdoctor_fake_qt.so");
  EXPECT_FALSE(probe_viewer("/nonexistent/gpuscope-view").exists);
  v = probe_viewer(std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope");
  EXPECT_TRUE(v.ldd_ran);
  EXPECT_TRUE(v.missing.empty());
}

TEST(DoctorProbes, RunProgram) {
  ProgramResult r = run_program({"sh", "-c", "echo out; echo err >&2; exit 4"}, 10000);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(run_program({"/nonexistent/program"}, 10000).started);
}

}  // namespace
}  // namespace gpuscope::doctor
