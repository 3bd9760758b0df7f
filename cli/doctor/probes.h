// The real probes behind `gpuscope doctor`: dlopen of the NVIDIA libraries,
// the collector's own libcupti search, a python subprocess, ldd. Each fills
// one struct of checks.h; tests point them at fake libraries, scripts and
// binaries, or skip them and fill the structs themselves.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/doctor/checks.h"

namespace gpuscope::doctor {

// `library`: the soname, or a fake's path in tests.
DriverProbe probe_driver(const char* library = "libcuda.so.1");
// The libcupti the collector would load (collector/cupti_locate.h).
CuptiProbe probe_cupti(const PythonProbe& py);
Environment probe_environment();
// Where the torch plugin is looked for: what the collector would see.
struct PluginLookup {
  std::string env_path;        // GPUSCOPE_TORCH_PLUGIN
  std::string cache;           // plugin_cache::cache_dir()
  std::string collector_dir;   // the folder of the collector record uses
};
PluginLookup plugin_lookup(const CollectorProbe& collector);
// The plugin a job of torch `torch_version` loads (empty version: the cache is skipped).
PluginProbe probe_plugin(const PluginLookup& lookup, const std::string& torch_version);
// The opening of every `python -c` script that asks about torch (doctor's
// and `setup torch`'s): `say(key, value)` prints one key=value line, so that
// whatever else the interpreter prints (sitecustomize, warnings) is skipped;
// `torch_error=...` and exit 0 when `import torch` fails.
extern const char* const kTorchScriptHead;

// Runs `python -c kPythonScript`: torch's version, the libcupti it loads, and
// whether the plugin probe_plugin picks for that version loads into it and for
// which torch it was built (the script asks for the path once it knows its
// torch, so torch is imported once). `python` is a resolved path; empty means
// none was found. `plugin` receives the plugin probed.
PythonProbe probe_python(const std::string& python, bool given, const PluginLookup& lookup, PluginProbe& plugin,
                         int timeout_ms);
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
// A question the program asks on stdout: once `out` holds the line `prompt`,
// `answer(out)` is written to its stdin as one line and stdin is closed.
struct Exchange {
  std::string prompt;
  std::function<std::string(const std::string& out)> answer;
};
// argv[0] is looked up on PATH; stdin is /dev/null, or the answer of `exchange`.
// On timeout the program's process group is killed.
ProgramResult run_program(const std::vector<std::string>& argv, int timeout_ms, const Exchange* exchange = nullptr);

}  // namespace gpuscope::doctor
