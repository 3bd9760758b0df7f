// The real probes behind `gpuscope doctor`: dlopen of the NVIDIA libraries,
// the collector's own libcupti search, a python subprocess, ldd. Each fills
// one struct of checks.h; tests point them at fake libraries, scripts and
// binaries, or skip them and fill the structs themselves.
#pragma once

#include <string>
#include <vector>

#include "cli/doctor/checks.h"

namespace gpuscope::doctor {

// `library`: the soname, or a fake's path in tests.
DriverProbe probe_driver(const char* library = "libcuda.so.1");
// The libcupti the collector would load (collector/cupti_locate.h).
CuptiProbe probe_cupti(const PythonProbe& py);
Environment probe_environment();
// The collector's order: GPUSCOPE_TORCH_PLUGIN, the cache of `gpuscope setup
// torch` for this torch version (when built), next to the collector.
PluginProbe probe_plugin(const CollectorProbe& collector, const std::string& torch_version = "");
// Runs `python -c kPythonScript [plugin]`: torch's version, the libcupti it
// loads, and whether the plugin loads into it and for which torch it was
// built. `python` is a resolved path; empty means none was found.
PythonProbe probe_python(const std::string& python, bool given, const PluginProbe& plugin, int timeout_ms);
NvmlProbe probe_nvml(const char* library = "libnvidia-ml.so.1");
ViewerProbe probe_viewer(const std::string& path);

// What probe_python makes of the script's stdout (key=value lines).
void parse_python_answer(const std::string& out, PythonProbe& py);

struct ProgramResult {
  bool started = false;
  bool timed_out = false;
  int exit_code = -1;  // 128+N when ended by signal N
  std::string out, err;
};
// argv[0] is looked up on PATH; stdin is /dev/null. On timeout the program's
// process group is killed.
ProgramResult run_program(const std::vector<std::string>& argv, int timeout_ms);

}  // namespace gpuscope::doctor
