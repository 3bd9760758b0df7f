// The real probes against fakes: libcuda.so.1 and libcupti from the collector's
// tests, a fake NVML, a fake `torch` module for the real python3 with fake
// plugins, and a viewer whose library the loader cannot find.
#include "cli/doctor/probes.h"
#include "collector/cupti_locate.h"
#include "trace_formats/common/plugin_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <filesystem>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::doctor {
namespace {

using cli::test::TempDir;
using cli::test::ScopedEnv;
using cli::test::write_file;


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

// A lookup that finds only `path` (GPUSCOPE_TORCH_PLUGIN's way).
PluginLookup only(const std::string& path) {
  PluginLookup l;
  l.env_path = path;
  return l;
}

TEST(DoctorProbes, PluginNextToTheCollectorOrFromTheEnvironment) {
  ScopedEnv cache("GPUSCOPE_CACHE_DIR", "/nonexistent/cache");
  PluginProbe p = probe_plugin(plugin_lookup({"/opt/gpuscope/lib/libgpuscope_collector.so", ""}), "2.11.0");
  EXPECT_EQ(p.path, "/nonexistent/cache/torch/2.11.0/libgpuscope_torch.so") << "where setup torch would put it";
  EXPECT_EQ(p.searched,
            "/nonexistent/cache/torch/2.11.0/libgpuscope_torch.so, /opt/gpuscope/lib/libgpuscope_torch.so");
  EXPECT_FALSE(p.exists);
  ScopedEnv env("GPUSCOPE_TORCH_PLUGIN", FAKE_PLUGIN_PATH);
  p = probe_plugin(plugin_lookup({}), "2.11.0");
  EXPECT_EQ(p.path, FAKE_PLUGIN_PATH);
  EXPECT_EQ(p.origin, plugin_cache::Origin::kEnvironment);
  EXPECT_TRUE(p.exists);
}

// The collector's order with a faked cache: GPUSCOPE_TORCH_PLUGIN, then the
// entry for the python's torch version, then next to the collector.
class CacheMachine {
 public:
  CacheMachine()
      : cache_("GPUSCOPE_CACHE_DIR", dir_.file("cache")),
        site_("PYTHONPATH", fake_torch(dir_, "__version__ = '2.11.0+cu130'\n")) {
    std::filesystem::create_directories(dir_.file("gpuscope"));
    std::filesystem::copy_file(FAKE_PLUGIN_OLD_PATH, dir_.file("gpuscope/libgpuscope_torch.so"));
  }
  // Puts a fake plugin built for 2.11.0 in the cache under `version`.
  std::string cache(const std::string& version) {
    const std::string entry = dir_.file("cache/torch/" + version);
    std::filesystem::create_directories(entry);
    std::filesystem::copy_file(FAKE_PLUGIN_PATH, entry + "/libgpuscope_torch.so");
    return entry + "/libgpuscope_torch.so";
  }
  CollectorProbe collector() const { return {dir_.file("gpuscope/libgpuscope_collector.so"), ""}; }
  std::string beside() const { return dir_.file("gpuscope/libgpuscope_torch.so"); }

 private:
  TempDir dir_;
  ScopedEnv cache_, site_;
};

TEST(DoctorProbes, PluginFromTheCacheForThePythonsTorch) {
  CacheMachine m;
  const std::string cached = m.cache("2.11.0+cu130");
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), false, plugin_lookup(m.collector()), plugin, 30000);
  EXPECT_EQ(plugin.path, cached);
  EXPECT_EQ(plugin.origin, plugin_cache::Origin::kCache);
  EXPECT_EQ(py.plugin_built_for, "2.11.0") << py.error;
  Check c = check_torch_plugin(py, plugin, m.collector());
  EXPECT_EQ(c.status, Status::kOk) << c.detail;
  EXPECT_EQ(c.detail, "torch 2.11.0+cu130, plugin " + cached + " built for 2.11.0 (the plugin cache)");
}

TEST(DoctorProbes, TheVariableComesBeforeTheCache) {
  CacheMachine m;
  m.cache("2.11.0+cu130");
  ScopedEnv env("GPUSCOPE_TORCH_PLUGIN", FAKE_PLUGIN_OLD_PATH);
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), false, plugin_lookup(m.collector()), plugin, 30000);
  EXPECT_EQ(plugin.path, FAKE_PLUGIN_OLD_PATH);
  EXPECT_EQ(py.plugin_built_for, "2.9.1");
  Check c = check_torch_plugin(py, plugin, m.collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(c.fix.rfind("unset GPUSCOPE_TORCH_PLUGIN", 0) == 0) << c.fix;
}

// A torch upgrade: the cache holds the old torch's plugin only, and the one
// next to the collector is for another torch too.
TEST(DoctorProbes, CacheForAnotherTorchFallsBackToTheCollectorsAndSaysSetup) {
  CacheMachine m;
  m.cache("2.9.1");
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), true, plugin_lookup(m.collector()), plugin, 30000);
  EXPECT_EQ(plugin.path, m.beside());
  EXPECT_EQ(plugin.origin, plugin_cache::Origin::kCollector);
  EXPECT_EQ(plugin.cached, std::vector<std::string>{"2.9.1"});
  EXPECT_EQ(py.plugin_built_for, "2.9.1");
  Check c = check_torch_plugin(py, plugin, m.collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.fix, "run `gpuscope setup torch --python " + python3() + "`");
  // Nothing next to the collector either: the cache's other torch is named.
  std::filesystem::remove(m.beside());
  py = probe_python(python3(), false, plugin_lookup(m.collector()), plugin, 30000);
  EXPECT_FALSE(py.plugin_tried);
  c = check_torch_plugin(py, plugin, m.collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(c.detail.find("the cache holds plugins for torch 2.9.1 only") != std::string::npos) << c.detail;
  EXPECT_EQ(c.fix, "run `gpuscope setup torch`");
}

TEST(DoctorProbes, PythonWithTorchLoadsThePlugin) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "__version__ = '2.11.0+cu130'\n"));
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), false, only(FAKE_PLUGIN_PATH), plugin, 30000);
  EXPECT_TRUE(py.found);
  EXPECT_EQ(py.torch_version, "2.11.0+cu130") << py.error;
  EXPECT_TRUE(py.plugin_tried);
  EXPECT_EQ(py.plugin_error, "");
  EXPECT_TRUE(py.plugin_says);
  EXPECT_EQ(py.plugin_built_for, "2.11.0");
  EXPECT_EQ(check_torch_plugin(py, plugin, {}).status, Status::kOk);
  py = probe_python(python3(), false, only(FAKE_PLUGIN_OLD_PATH), plugin, 30000);
  EXPECT_EQ(py.plugin_built_for, "2.9.1");
  EXPECT_EQ(check_torch_plugin(py, plugin, {}).status, Status::kFail);
}

TEST(DoctorProbes, PluginThatDoesNotLoad) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "__version__ = '2.11.0'\n"));
  write_file(dir.file("libgpuscope_torch.so"), "not an ELF file");
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), false, only(dir.file("libgpuscope_torch.so")), plugin, 30000);
  EXPECT_EQ(py.torch_version, "2.11.0");
  EXPECT_NE(py.plugin_error.find("libgpuscope_torch.so"), std::string::npos) << py.plugin_error;
  EXPECT_FALSE(py.plugin_says);
}

TEST(DoctorProbes, PythonWithoutTorch) {
  TempDir dir;
  ScopedEnv path("PYTHONPATH", fake_torch(dir, "raise ModuleNotFoundError(\"No module named 'torch'\")\n"));
  PluginProbe plugin;
  PythonProbe py = probe_python(python3(), true, only(FAKE_PLUGIN_PATH), plugin, 30000);
  EXPECT_EQ(py.torch_version, "");
  EXPECT_EQ(py.torch_error, "ModuleNotFoundError: No module named 'torch'");
  EXPECT_EQ(check_torch_plugin(py, plugin, {}).status, Status::kWarn);
}

TEST(DoctorProbes, PythonMissingOrHanging) {
  PluginProbe plugin;
  PythonProbe py = probe_python("", true, {}, plugin, 1000);
  EXPECT_FALSE(py.found);
  TempDir dir;
  write_file(dir.file("python"), "#!/bin/sh\nsleep 30\n");
  std::filesystem::permissions(dir.file("python"), std::filesystem::perms::owner_all);
  const auto start = std::chrono::steady_clock::now();
  py = probe_python(dir.file("python"), true, {}, plugin, 300);
  EXPECT_TRUE(py.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(check_torch_plugin(py, {}, {}).status, Status::kFail);
}

TEST(DoctorProbes, PythonThatFails) {
  TempDir dir;
  write_file(dir.file("python"), "#!/bin/sh\necho 'Fatal Python error: init' >&2\nexit 3\n");
  std::filesystem::permissions(dir.file("python"), std::filesystem::perms::owner_all);
  PluginProbe plugin;
  PythonProbe py = probe_python(dir.file("python"), true, {}, plugin, 10000);
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

// The question a program asks on stdout is answered on its stdin; a program
// that never asks, or has gone, is no trouble.
TEST(DoctorProbes, RunProgramAnswersAQuestion) {
  std::string seen;
  const Exchange ask{"which=1", [&](const std::string& out) {
                       seen = out;
                       return std::string("/the/answer");
                     }};
  ProgramResult r = run_program({"sh", "-c", "echo first; echo which=1; read a; echo got=$a"}, 10000, &ask);
  EXPECT_EQ(r.out, "first\nwhich=1\ngot=/the/answer\n");
  EXPECT_EQ(seen, "first\nwhich=1\n");
  seen.clear();
  r = run_program({"sh", "-c", "echo nowhich=1"}, 10000, &ask);
  EXPECT_EQ(r.out, "nowhich=1\n");
  EXPECT_EQ(seen, "") << "not the prompt line: no answer";
  r = run_program({"sh", "-c", "echo which=1; exec 0<&-; exit 3"}, 10000, &ask);
  EXPECT_EQ(r.exit_code, 3);
}

}  // namespace
}  // namespace gpuscope::doctor
