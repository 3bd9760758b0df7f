#include "cli/doctor/checks.h"

#include <nlohmann/json.hpp>

#include <string_view>

#include "trace_formats/common/settings.h"
#include "trace_formats/common/text.h"
#include "plugins/torch/build_info.h"

namespace gpuscope::doctor {
namespace {

Check ok(const char* name, std::string detail) { return {name, Status::kOk, std::move(detail), {}}; }
Check warn(const char* name, std::string detail, std::string fix) {
  return {name, Status::kWarn, std::move(detail), std::move(fix)};
}
Check fail(const char* name, std::string detail, std::string fix) {
  return {name, Status::kFail, std::move(detail), std::move(fix)};
}

// 13000 -> "13.0", the way nvidia-smi prints CUDA versions.
std::string cuda_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Libraries whose preload means another CUDA profiler is in the job.
bool is_profiler_library(std::string_view path) {
  const std::string base = base_name(path);
  for (const char* marker : {"libnvperf", "libToolsInjection", "nsys"})
    if (base.find(marker) != std::string::npos) return true;
  return false;
}

bool is_gpuscope_collector(std::string_view path) { return base_name(path) == "libgpuscope_collector.so"; }

// "run `gpuscope setup torch [--python PY] [--force]`".
std::string setup_command(const PythonProbe& py, bool force) {
  return "run `gpuscope setup torch" + (py.given ? " --python " + py.python : std::string()) +
         (force ? " --force" : "") + "`";
}

const char* status_word(Status s) { return s == Status::kOk ? "ok  " : s == Status::kWarn ? "warn" : "FAIL"; }
const char* status_name(Status s) { return s == Status::kOk ? "ok" : s == Status::kWarn ? "warn" : "fail"; }

}  // namespace

Check check_driver(const DriverProbe& d) {
  if (!d.loaded)
    return warn("driver", "no NVIDIA driver (" + d.load_error + ")",
                "record still traces torch ops and NVTX ranges on the CPU; install the NVIDIA driver to trace GPU work");
  if (d.result != 0 || d.cuda_version <= 0)
    return fail("driver",
                d.result == -1 ? "libcuda.so.1 has no cuDriverGetVersion"
                               : "libcuda.so.1 loads but cuDriverGetVersion failed (CUresult " +
                                     std::to_string(d.result) + ")",
                "reinstall the NVIDIA driver; `nvidia-smi` should list the GPUs");
  std::string detail = d.driver_version.empty() ? "" : d.driver_version + ", ";
  return ok("driver", detail + "CUDA " + cuda_text(d.cuda_version));
}

Check check_cupti(const CuptiProbe& c, const DriverProbe& d, const PythonProbe& py) {
  // A torch job loads its own libcupti before CUDA starts, and the collector
  // takes one already in the process first.
  const std::string torch_note =
      py.torch_cupti.empty() || py.torch_cupti == c.path
          ? ""
          : "; torch " + py.torch_version + " loads " + py.torch_cupti + ", which torch jobs use";
  if (!c.found) {
    const std::string detail = "no libcupti on the library path or under /usr/local/cuda";
    if (!py.torch_cupti.empty())
      return warn("cupti", detail + torch_note,
                  "for CUDA programs without torch set GPUSCOPE_CUPTI=" + py.torch_cupti);
    const std::string fix =
        "install CUPTI (the CUDA toolkit's extras/CUPTI, or pip's nvidia-cuda-cupti) and set GPUSCOPE_CUPTI to "
        "its libcupti.so";
    if (!d.loaded) return warn("cupti", detail + " (no GPU tracing without a driver anyway)", fix);
    return fail("cupti", detail + ": GPU work is not recorded", fix);
  }
  if (c.result == -1)
    return fail("cupti", c.path + " has no cuptiGetVersion: not a CUPTI library",
                "point GPUSCOPE_CUPTI at CUPTI's libcupti.so");
  if (c.result != 0)
    return fail("cupti", c.path + ": cuptiGetVersion failed (CUptiResult " + std::to_string(c.result) + ")",
                "use the CUPTI of the job's CUDA version (GPUSCOPE_CUPTI)");
  return ok("cupti", c.path + " (CUPTI API " + std::to_string(c.api_version) + ")" + torch_note);
}

Check check_other_profiler(const Environment& env) {
  std::vector<std::string> found;
  if (auto it = env.find("CUDA_INJECTION64_PATH"); it != env.end() && !it->second.empty() &&
                                                   !is_gpuscope_collector(it->second))
    found.push_back("CUDA_INJECTION64_PATH=" + it->second + " (record keeps it, so CUDA loads that instead of "
                    "gpuscope's collector)");
  if (auto it = env.find("LD_PRELOAD"); it != env.end()) {
    std::string_view rest = it->second;
    while (!rest.empty()) {
      const size_t end = rest.find_first_of(": ");
      const std::string_view entry = rest.substr(0, end);
      if (!entry.empty() && is_profiler_library(entry)) found.push_back("LD_PRELOAD has " + std::string(entry));
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    }
  }
  for (const auto& [name, value] : env)
    if (name.rfind("NSYS_", 0) == 0) {
      found.push_back(name + " is set (running under Nsight Systems)");
      break;
    }
  if (found.empty()) return ok("profiler", "no other CUDA profiler injected (CUDA_INJECTION64_PATH, LD_PRELOAD, NSYS_*)");
  std::string detail;
  for (const auto& f : found) detail += (detail.empty() ? "" : "; ") + f;
  return fail("profiler", detail,
              "CUPTI serves one profiler per process: run gpuscope outside nsys/ncu and unset the variables named");
}

Check check_collector(const CollectorProbe& c) {
  if (c.path.empty())
    return fail("collector", c.error, "reinstall gpuscope with its lib/ folder, or set GPUSCOPE_COLLECTOR");
  return ok("collector", c.path);
}

Check check_torch_plugin(const PythonProbe& py, const PluginProbe& plugin, const CollectorProbe& collector) {
  if (!py.found) {
    if (py.given) return fail("torch", py.python + ": not an executable", "pass --python the python your jobs run");
    return warn("torch", "no python3 on PATH: the torch plugin was not checked",
                "pass --python the python your jobs run");
  }
  if (py.timed_out)
    return fail("torch", py.python + " did not finish `import torch` in time",
                "check that `" + py.python + " -c 'import torch'` works");
  if (py.torch_version.empty() && py.torch_error.empty())
    return fail("torch", py.python + " failed (exit " + std::to_string(py.exit_code) + ")" +
                             (py.error.empty() ? "" : ": " + py.error),
                "check that `" + py.python + " -c 'import torch'` works");
  if (py.torch_version.empty()) {
    if (py.torch_error.rfind("ModuleNotFoundError", 0) == 0)
      return warn("torch", py.python + " has no torch: torch jobs are not checked",
                  "pass --python the python your torch jobs run");
    return fail("torch", py.python + ": import torch failed: " + py.torch_error, "repair this torch install");
  }
  const std::string torch = "torch " + py.torch_version;
  const bool from_env = plugin.origin == plugin_cache::Origin::kEnvironment;
  const bool from_cache = plugin.origin == plugin_cache::Origin::kCache;
  // What to do about a plugin that is missing or not for this torch.
  const std::string env_fix = "unset " + std::string(settings::name(settings::Id::kTorchPlugin)) +
                              " to use the plugin of `gpuscope setup torch`, or point it at one built for " + torch;
  const std::string build_fix = from_env ? env_fix : setup_command(py, from_cache);
  if (plugin.path.empty())
    return fail("torch", torch + ", but no torch plugin: no cache folder (HOME is not set)" +
                             (collector.error.empty() ? "" : " and " + collector.error),
                "set " + std::string(settings::name(settings::Id::kCacheDir)) + ", then " + setup_command(py, false));
  if (!plugin.exists) {
    if (from_env)
      return fail("torch", torch + ", but " + settings::name(settings::Id::kTorchPlugin) + "=" + plugin.path +
                               " does not exist: ops are not recorded",
                  env_fix);
    std::string others;
    for (const auto& v : plugin.cached) others += (others.empty() ? "" : ", ") + v;
    return fail("torch", torch + ", but no plugin for it (looked at " + plugin.searched + "): ops are not recorded" +
                             (others.empty() ? "" : "; the cache holds plugins for torch " + others + " only"),
                setup_command(py, false));
  }
  if (!py.plugin_error.empty())
    return fail("torch", plugin.path + " does not load into " + torch + ": " + py.plugin_error, build_fix);
  if (!py.plugin_says)
    return warn("torch", torch + ", " + plugin.path + " loads but does not say which torch it was built for",
                build_fix + " so that doctor can tell");
  // The check the plugin makes when the collector loads it.
  if (!torch_plugin::same_torch_release(py.plugin_built_for, py.torch_version))
    return fail("torch",
                plugin.path + ": " + torch_plugin::version_mismatch_message(py.plugin_built_for, py.torch_version),
                build_fix);
  return ok("torch", torch + ", plugin " + plugin.path + " built for " + py.plugin_built_for + " (" +
                         plugin_cache::origin_name(plugin.origin) + ")");
}

Check check_nvml(const NvmlProbe& n) {
  if (!n.loaded)
    return warn("nvml", "no NVML (" + n.load_error + ")",
                "record --trace nvml records no GPU counters without the NVIDIA driver");
  if (n.init_result != 0)
    return fail("nvml",
                n.init_result == -1 ? "libnvidia-ml.so.1 has no nvmlInit_v2"
                                    : "nvmlInit failed: " +
                                          (n.init_error.empty() ? "error " + std::to_string(n.init_result)
                                                                : n.init_error),
                "`nvidia-smi` should work; the NVML library and the kernel driver must be the same version");
  return ok("nvml", std::to_string(n.devices) + " GPU" + (n.devices == 1 ? "" : "s") +
                        (n.driver_version.empty() ? "" : ", driver " + n.driver_version));
}

// A warning, not a failure: GPU servers often have no Qt, and recording and
// the reports need none; the viewer can run on another machine.
Check check_viewer(const ViewerProbe& v) {
  if (!v.exists)
    return warn("viewer", "gpuscope-view is not next to gpuscope (built without -DGPUSCOPE_WITH_GUI=ON)",
                "open recordings on a machine with the viewer, or build it with Qt 6");
  if (!v.ldd_ran) return warn("viewer", "could not run ldd on " + v.path, "run `ldd " + v.path + "` yourself");
  if (!v.missing.empty()) {
    std::string libs;
    for (const auto& m : v.missing) libs += (libs.empty() ? "" : ", ") + m;
    return warn("viewer", v.path + " misses " + libs,
                "install Qt 6 Widgets (Ubuntu: apt-get install libqt6widgets6 libqt6opengl6), or open recordings "
                "elsewhere");
  }
  return ok("viewer", v.path + " finds its Qt libraries");
}

std::string to_text(const std::vector<Check>& checks) {
  std::string out;
  for (const auto& c : checks) {
    std::string line = std::string(status_word(c.status)) + " " + c.name + ": " + c.detail;
    if (!c.fix.empty()) line += " \xE2\x80\x94 " + c.fix;  // an em dash
    out += terminal_safe(line) + "\n";
  }
  return out;
}

std::string to_json(const std::vector<Check>& checks) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : checks)
    list.push_back({{"check", c.name}, {"ok", c.status != Status::kFail}, {"status", status_name(c.status)},
                    {"detail", c.detail}, {"fix", c.fix}});
  // Paths from the environment may hold bytes that are not UTF-8.
  return list.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

bool any_failed(const std::vector<Check>& checks) {
  for (const auto& c : checks)
    if (c.status == Status::kFail) return true;
  return false;
}

}  // namespace gpuscope::doctor
