// `gpuscope doctor`: what the machine offers a recording, one check per line.
// Probing (dlopen, python, ldd: probes.h) is kept apart from judging (here):
// each check is a small function of plain probe values, so tests fake any
// machine by filling these structs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trace_formats/common/plugin_cache.h"

namespace gpuscope::doctor {

enum class Status { kOk, kWarn, kFail };

struct Check {
  std::string name;    // "driver", "cupti", ...
  Status status = Status::kOk;
  std::string detail;  // what was found
  std::string fix;     // what to do; empty when ok
};

struct DriverProbe {
  bool loaded = false;         // libcuda.so.1
  std::string load_error;      // dlerror() when not
  int result = 0;              // cuDriverGetVersion's CUresult (-1: no such symbol)
  int cuda_version = 0;        // 13000 = CUDA 13.0
  std::string driver_version;  // "575.57.08" (/proc/driver/nvidia/version), may be empty
};

struct CuptiProbe {
  bool found = false;          // the collector's search found one
  std::string path;            // which
  int result = 0;              // cuptiGetVersion's CUptiResult (-1: no such symbol)
  uint32_t api_version = 0;
};

struct CollectorProbe {
  std::string path;            // libgpuscope_collector.so the way record finds it
  std::string error;           // why not, when path is empty
};

// What `python -c` said (probes.cpp, kPythonScript) about its torch.
struct PythonProbe {
  std::string python;          // as given or as found on PATH
  bool given = false;          // --python
  bool found = false;          // an executable
  bool timed_out = false;
  int exit_code = 0;
  std::string error;           // its last stderr line when it failed
  std::string torch_version;   // torch.__version__; empty: no torch
  std::string torch_error;     // "ModuleNotFoundError: ..." when import torch failed
  std::string torch_cupti;     // the libcupti torch loaded into the process, if any
  std::string nvidia_dir;      // its pip wheels' CUDA (site-packages/nvidia), if any
  bool plugin_tried = false;   // the plugin file was handed to it
  std::string plugin_error;    // ctypes could not load the plugin into that torch
  bool plugin_says = false;    // the plugin exports gpuscope_plugin_built_for
  std::string plugin_built_for;
};

// The torch plugin a job of the python's torch loads, looked for in the
// collector's order (common/plugin_cache.h): GPUSCOPE_TORCH_PLUGIN, the entry
// of `gpuscope setup torch`'s cache for that torch version, next to the collector.
struct PluginProbe {
  std::string path;            // the first candidate that exists, else the first one; empty: none
  bool exists = false;
  plugin_cache::Origin origin = plugin_cache::Origin::kCollector;  // where `path` comes from
  std::string searched;        // every candidate, "a, b", for the message when none exists
  std::vector<std::string> cached;  // the cache's entries (torch versions) that hold a plugin
};

struct NvmlProbe {
  bool loaded = false;         // libnvidia-ml.so.1
  std::string load_error;
  int init_result = 0;         // nvmlInit_v2's nvmlReturn_t (-1: no such symbol)
  std::string init_error;      // nvmlErrorString
  unsigned devices = 0;
  std::string driver_version;  // nvmlSystemGetDriverVersion
};

struct ViewerProbe {
  std::string path;            // gpuscope-view next to gpuscope
  bool exists = false;
  bool ldd_ran = false;
  std::vector<std::string> missing;  // sonames ldd reports "not found"
};

// Every variable the check of other profilers reads (environment snapshot).
using Environment = std::map<std::string, std::string>;

Check check_driver(const DriverProbe& d);
Check check_cupti(const CuptiProbe& c, const DriverProbe& d, const PythonProbe& py);
Check check_other_profiler(const Environment& env);
Check check_collector(const CollectorProbe& c);
Check check_torch_plugin(const PythonProbe& py, const PluginProbe& plugin, const CollectorProbe& collector);
Check check_nvml(const NvmlProbe& n);
Check check_viewer(const ViewerProbe& v);

// "ok   driver: ...", "warn ...", "FAIL cupti: ... — fix", one line each.
std::string to_text(const std::vector<Check>& checks);
// [{"check", "ok", "status", "detail", "fix"}, ...]
std::string to_json(const std::vector<Check>& checks);
bool any_failed(const std::vector<Check>& checks);

}  // namespace gpuscope::doctor
