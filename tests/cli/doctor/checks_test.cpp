// Each doctor check on planted probe values: every failure and warning path,
// the ok path, and the text and JSON lines.
#include "cli/doctor/checks.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpuscope::doctor {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

DriverProbe good_driver() {
  DriverProbe d;
  d.loaded = true;
  d.cuda_version = 12090;
  d.driver_version = "575.57.08";
  return d;
}

CuptiProbe good_cupti() {
  CuptiProbe c;
  c.found = true;
  c.path = "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12";
  c.api_version = 24;
  return c;
}

PythonProbe torch_python(const std::string& version = "2.11.0+cu130") {
  PythonProbe py;
  py.python = "/usr/bin/python3";
  py.found = true;
  py.torch_version = version;
  py.plugin_tried = true;
  py.plugin_says = true;
  py.plugin_built_for = "2.11.0";
  return py;
}

CollectorProbe good_collector() { return {"/opt/gpuscope/lib/libgpuscope_collector.so", ""}; }
PluginProbe good_plugin() {
  PluginProbe p;
  p.path = "/opt/gpuscope/lib/libgpuscope_torch.so";
  p.exists = true;
  return p;
}

TEST(DoctorDriver, NoDriverIsAWarningThatCpuJobsStillWork) {
  DriverProbe d;
  d.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  Check c = check_driver(d);
  EXPECT_EQ(c.status, Status::kWarn);
  EXPECT_TRUE(has(c.detail, "no NVIDIA driver")) << c.detail;
  EXPECT_TRUE(has(c.fix, "on the CPU")) << c.fix;
}

TEST(DoctorDriver, VersionQueryFailing) {
  DriverProbe d = good_driver();
  d.result = 999;
  d.cuda_version = 0;
  Check c = check_driver(d);
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "cuDriverGetVersion failed (CUresult 999)")) << c.detail;
  d.result = -1;
  EXPECT_TRUE(has(check_driver(d).detail, "has no cuDriverGetVersion"));
}

TEST(DoctorDriver, Ok) {
  Check c = check_driver(good_driver());
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.detail, "575.57.08, CUDA 12.9");
  DriverProbe d = good_driver();
  d.driver_version.clear();
  d.cuda_version = 13000;
  EXPECT_EQ(check_driver(d).detail, "CUDA 13.0");
}

TEST(DoctorCupti, NotFoundWithADriverFails) {
  Check c = check_cupti({}, good_driver(), {});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.fix, "GPUSCOPE_CUPTI")) << c.fix;
}

TEST(DoctorCupti, NotFoundWithoutADriverWarns) {
  EXPECT_EQ(check_cupti({}, {}, {}).status, Status::kWarn);
}

TEST(DoctorCupti, NotFoundButTorchLoadsOne) {
  PythonProbe py = torch_python();
  py.torch_cupti = "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13";
  Check c = check_cupti({}, good_driver(), py);
  EXPECT_EQ(c.status, Status::kWarn);
  EXPECT_TRUE(has(c.detail, "torch 2.11.0+cu130 loads " + py.torch_cupti)) << c.detail;
  EXPECT_EQ(c.fix, "for CUDA programs without torch set GPUSCOPE_CUPTI=" + py.torch_cupti);
}

TEST(DoctorCupti, NotACuptiLibrary) {
  CuptiProbe cupti = good_cupti();
  cupti.result = -1;
  Check c = check_cupti(cupti, good_driver(), {});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "has no cuptiGetVersion")) << c.detail;
}

TEST(DoctorCupti, VersionQueryFailing) {
  CuptiProbe cupti = good_cupti();
  cupti.result = 15;
  Check c = check_cupti(cupti, good_driver(), {});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "cuptiGetVersion failed (CUptiResult 15)")) << c.detail;
}

TEST(DoctorCupti, OkNamesTheLibraryAndTorchsOwn) {
  Check c = check_cupti(good_cupti(), good_driver(), {});
  EXPECT_EQ(c.status, Status::kOk);
  EXPECT_EQ(c.detail, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.12 (CUPTI API 24)");
  PythonProbe py = torch_python();
  py.torch_cupti = "/venv/nvidia/cuda_cupti/lib/libcupti.so.12";
  EXPECT_TRUE(has(check_cupti(good_cupti(), good_driver(), py).detail, "loads /venv/nvidia/cuda_cupti/lib/libcupti.so.12, which torch jobs use"));
}

TEST(DoctorProfiler, AnotherInjectionLibrary) {
  Check c = check_other_profiler({{"CUDA_INJECTION64_PATH", "/opt/nsys/target-linux-x64/libToolsInjection64.so"}});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "CUDA_INJECTION64_PATH=/opt/nsys/target-linux-x64/libToolsInjection64.so")) << c.detail;
}

TEST(DoctorProfiler, PreloadedProfilerAndNsysSession) {
  Check c = check_other_profiler(
      {{"LD_PRELOAD", "/usr/lib/libjemalloc.so:/opt/nsight/libnvperf_host.so"}, {"NSYS_PROFILING_SESSION_ID", "3"}});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "LD_PRELOAD has /opt/nsight/libnvperf_host.so")) << c.detail;
  EXPECT_FALSE(has(c.detail, "jemalloc")) << c.detail;
  EXPECT_TRUE(has(c.detail, "NSYS_PROFILING_SESSION_ID is set")) << c.detail;
}

TEST(DoctorProfiler, GpuscopesOwnCollectorAndAClearEnvironmentAreOk) {
  EXPECT_EQ(check_other_profiler({{"CUDA_INJECTION64_PATH", "/opt/gpuscope/lib/libgpuscope_collector.so"},
                                  {"LD_PRELOAD", "/usr/lib/libjemalloc.so"},
                                  {"PATH", "/usr/bin"}})
                .status,
            Status::kOk);
  EXPECT_EQ(check_other_profiler({}).status, Status::kOk);
}

TEST(DoctorCollector, MissingAndFound) {
  Check c = check_collector({"", "libgpuscope_collector.so not found next to /opt/gpuscope/bin"});
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.fix, "GPUSCOPE_COLLECTOR")) << c.fix;
  EXPECT_EQ(check_collector(good_collector()).status, Status::kOk);
}

TEST(DoctorTorch, NoPythonOnPathWarnsAGivenOneFails) {
  PythonProbe py;
  py.python = "python3";
  EXPECT_EQ(check_torch_plugin(py, good_plugin(), good_collector()).status, Status::kWarn);
  py.given = true;
  py.python = "/no/such/python";
  Check c = check_torch_plugin(py, good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "/no/such/python: not an executable")) << c.detail;
}

TEST(DoctorTorch, PythonTimedOutOrFailed) {
  PythonProbe py = torch_python();
  py.torch_version.clear();
  py.timed_out = true;
  EXPECT_TRUE(has(check_torch_plugin(py, good_plugin(), good_collector()).detail, "did not finish"));
  py.timed_out = false;
  py.exit_code = 139;
  py.error = "Segmentation fault";
  Check c = check_torch_plugin(py, good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "failed (exit 139): Segmentation fault")) << c.detail;
}

TEST(DoctorTorch, NoTorchWarnsABrokenOneFails) {
  PythonProbe py = torch_python();
  py.torch_version.clear();
  py.torch_error = "ModuleNotFoundError: No module named 'torch'";
  EXPECT_EQ(check_torch_plugin(py, good_plugin(), good_collector()).status, Status::kWarn);
  py.torch_error = "ImportError: libcudnn.so.9: cannot open shared object file";
  Check c = check_torch_plugin(py, good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "libcudnn.so.9")) << c.detail;
}

TEST(DoctorTorch, NoCollectorNoPlugin) {
  CollectorProbe none{"", "libgpuscope_collector.so not found next to /x"};
  Check c = check_torch_plugin(torch_python(), {}, none);
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "not found next to /x")) << c.detail;
}

TEST(DoctorTorch, NoCacheFolderNoCollector) {
  CollectorProbe none{"", "libgpuscope_collector.so not found next to /x"};
  Check c = check_torch_plugin(torch_python(), {}, none);
  EXPECT_TRUE(has(c.detail, "no cache folder (HOME is not set)")) << c.detail;
  EXPECT_EQ(c.fix, "set GPUSCOPE_CACHE_DIR, then run `gpuscope setup torch`");
}

// Nothing where the collector looks: the cache entry for this torch (first),
// then next to the collector.
TEST(DoctorTorch, PluginMissing) {
  PluginProbe p;
  p.path = "/home/u/.cache/gpuscope/torch/2.11.0+cu130/libgpuscope_torch.so";
  p.origin = plugin_cache::Origin::kCache;
  p.searched = p.path + ", /opt/gpuscope/lib/libgpuscope_torch.so";
  Check c = check_torch_plugin(torch_python(), p, good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.detail, "torch 2.11.0+cu130, but no plugin for it (looked at " + p.searched +
                          "): ops are not recorded");
  EXPECT_EQ(c.fix, "run `gpuscope setup torch`");
  PythonProbe given = torch_python();
  given.given = true;
  given.python = "/venv/bin/python";
  EXPECT_EQ(check_torch_plugin(given, p, good_collector()).fix, "run `gpuscope setup torch --python /venv/bin/python`");
}

// After a torch upgrade the cache holds the old torch's plugin only.
TEST(DoctorTorch, PluginMissingAfterAnUpgradeNamesTheOldTorch) {
  PluginProbe p;
  p.path = "/c/torch/2.12.0/libgpuscope_torch.so";
  p.origin = plugin_cache::Origin::kCache;
  p.searched = p.path;
  p.cached = {"2.10.0", "2.11.0+cu130"};
  Check c = check_torch_plugin(torch_python("2.12.0"), p, good_collector());
  EXPECT_TRUE(has(c.detail, "; the cache holds plugins for torch 2.10.0, 2.11.0+cu130 only")) << c.detail;
  EXPECT_EQ(c.fix, "run `gpuscope setup torch`");
}

TEST(DoctorTorch, PluginOfTheVariableMissing) {
  PluginProbe p;
  p.path = "/my/libgpuscope_torch.so";
  p.origin = plugin_cache::Origin::kEnvironment;
  Check c = check_torch_plugin(torch_python(), p, good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.detail, "torch 2.11.0+cu130, but GPUSCOPE_TORCH_PLUGIN=/my/libgpuscope_torch.so does not exist: "
                      "ops are not recorded");
  EXPECT_EQ(c.fix, "unset GPUSCOPE_TORCH_PLUGIN to use the plugin of `gpuscope setup torch`, or point it at one "
                   "built for torch 2.11.0+cu130");
}

// A cache entry that is wrong for its torch (built by hand, or a torch
// reinstalled under the same version) is rebuilt with --force.
TEST(DoctorTorch, CachedPluginForAnotherTorchIsBuiltAgain) {
  PluginProbe p;
  p.path = "/c/torch/2.12.0/libgpuscope_torch.so";
  p.exists = true;
  p.origin = plugin_cache::Origin::kCache;
  Check c = check_torch_plugin(torch_python("2.12.0"), p, good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_EQ(c.fix, "run `gpuscope setup torch --force`");
}

TEST(DoctorTorch, PluginDoesNotLoadIntoThisTorch) {
  PythonProbe py = torch_python();
  py.plugin_says = false;
  py.plugin_error = "libtorch_cpu.so: undefined symbol: _ZN3c10...";
  Check c = check_torch_plugin(py, good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "does not load into torch 2.11.0+cu130: libtorch_cpu.so: undefined symbol")) << c.detail;
  EXPECT_EQ(c.fix, "run `gpuscope setup torch`");
}

TEST(DoctorTorch, PluginThatDoesNotSayItsTorchWarns) {
  PythonProbe py = torch_python();
  py.plugin_says = false;
  EXPECT_EQ(check_torch_plugin(py, good_plugin(), good_collector()).status, Status::kWarn);
}

TEST(DoctorTorch, PluginBuiltForAnotherTorch) {
  Check c = check_torch_plugin(torch_python("2.12.0+cu130"), good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "built for torch 2.11.0 but this process runs torch 2.12.0+cu130")) << c.detail;
  EXPECT_TRUE(has(c.detail, "run `gpuscope setup torch` to build one for this torch")) << c.detail;
  EXPECT_EQ(c.fix, "run `gpuscope setup torch`");
}

TEST(DoctorTorch, OkIgnoresTheLocalSuffix) {
  Check c = check_torch_plugin(torch_python("2.11.0+cu130"), good_plugin(), good_collector());
  EXPECT_EQ(c.status, Status::kOk) << c.detail;
  EXPECT_EQ(c.detail, "torch 2.11.0+cu130, plugin /opt/gpuscope/lib/libgpuscope_torch.so built for 2.11.0 (next to "
                      "the collector)");
}

TEST(DoctorNvml, MissingWarnsInitFailureFails) {
  NvmlProbe n;
  n.load_error = "libnvidia-ml.so.1: cannot open shared object file";
  EXPECT_EQ(check_nvml(n).status, Status::kWarn);
  n.loaded = true;
  n.init_result = 9;
  n.init_error = "Driver Not Loaded";
  Check c = check_nvml(n);
  EXPECT_EQ(c.status, Status::kFail);
  EXPECT_TRUE(has(c.detail, "nvmlInit failed: Driver Not Loaded")) << c.detail;
}

TEST(DoctorNvml, Ok) {
  NvmlProbe n;
  n.loaded = true;
  n.devices = 8;
  n.driver_version = "575.57.08";
  EXPECT_EQ(check_nvml(n).detail, "8 GPUs, driver 575.57.08");
}

TEST(DoctorViewer, NotBuiltOrMissingQtWarnsNamingTheLibraries) {
  ViewerProbe v;
  v.path = "/opt/gpuscope/bin/gpuscope-view";
  EXPECT_EQ(check_viewer(v).status, Status::kWarn);
  v.exists = v.ldd_ran = true;
  v.missing = {"libQt6Widgets.so.6", "libQt6Gui.so.6"};
  Check c = check_viewer(v);
  EXPECT_EQ(c.status, Status::kWarn);  // recording needs no Qt
  EXPECT_TRUE(has(c.detail, "misses libQt6Widgets.so.6, libQt6Gui.so.6")) << c.detail;
  v.missing.clear();
  EXPECT_EQ(check_viewer(v).status, Status::kOk);
}

TEST(DoctorOutput, TextOneLinePerCheck) {
  std::vector<Check> checks = {check_driver(good_driver()), check_cupti({}, good_driver(), {})};
  const std::string text = to_text(checks);
  EXPECT_EQ(text.substr(0, text.find('\n')), "ok   driver: 575.57.08, CUDA 12.9");
  EXPECT_TRUE(has(text, "\nFAIL cupti: no libcupti on the library path or under /usr/local/cuda: GPU work is not "
                        "recorded \xE2\x80\x94 install CUPTI"))
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_TRUE(any_failed(checks));
  EXPECT_FALSE(any_failed({checks[0]}));
}

TEST(DoctorOutput, ControlBytesFromTheEnvironmentAreShownEscaped) {
  const std::string text = to_text({check_other_profiler({{"CUDA_INJECTION64_PATH", "/tmp/x\x1b]0;y\a.so"}})});
  EXPECT_TRUE(has(text, "/tmp/x\\x1b]0;y\\x07.so")) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

TEST(DoctorOutput, Json) {
  const auto j = nlohmann::json::parse(to_json({check_driver(good_driver()), check_nvml({})}));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["check"], "driver");
  EXPECT_EQ(j[0]["ok"], true);
  EXPECT_EQ(j[0]["status"], "ok");
  EXPECT_EQ(j[0]["detail"], "575.57.08, CUDA 12.9");
  EXPECT_EQ(j[0]["fix"], "");
  EXPECT_EQ(j[1]["ok"], true);  // a warning is not a failure
  EXPECT_EQ(j[1]["status"], "warn");
  EXPECT_NE(j[1]["fix"], "");
}

}  // namespace
}  // namespace gpuscope::doctor
