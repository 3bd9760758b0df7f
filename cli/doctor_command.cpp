// `gpuscope doctor [--python PATH] [--format text|json]`: whether this machine
// can be recorded on, one line per check (cli/doctor/checks.h), each ok or what
// to do. Exit 0 when nothing failed, 1 otherwise. A missing driver, NVML, torch
// or viewer is a warning: CPU jobs and the reports need none of them.
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/doctor/checks.h"
#include "cli/doctor/probes.h"
#include "cli/record_support.h"
#include "trace_formats/common/error.h"

namespace gpuscope::cli {
namespace {

// A cold `import torch` on a network file system takes tens of seconds.
constexpr int kPythonTimeoutMs = 60000;

struct DoctorArgs {
  std::string python, format = "text";
};

doctor::CollectorProbe probe_collector() {
  doctor::CollectorProbe c;
  try {
    c.path = find_collector();
  } catch (const Error& e) {
    c.error = e.what();
    if (c.error.rfind("record: ", 0) == 0) c.error.erase(0, 8);
  }
  return c;
}

void run(const DoctorArgs& a) {
  using namespace doctor;
  const bool given = !a.python.empty();
  const std::string name = given ? a.python : "python3";
  const std::string python = name.find('/') != std::string::npos ? name : find_executable(name);

  const CollectorProbe collector = probe_collector();
  PluginProbe plugin;
  PythonProbe py = probe_python(python, given, plugin_lookup(collector), plugin, kPythonTimeoutMs);
  if (py.python.empty()) py.python = name;
  const DriverProbe driver = probe_driver();
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);

  const std::vector<Check> checks = {
      check_driver(driver),
      check_cupti(probe_cupti(py), driver, py),
      check_other_profiler(probe_environment()),
      check_collector(collector),
      check_torch_plugin(py, plugin, collector),
      check_nvml(probe_nvml()),
      check_viewer(probe_viewer((self.parent_path() / "gpuscope-view").string())),
  };
  const std::string out = a.format == "json" ? to_json(checks) : to_text(checks);
  std::fwrite(out.data(), 1, out.size(), stdout);
  exit_code = any_failed(checks) ? 1 : 0;
}

}  // namespace

static void add_doctor_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "doctor", "Check this machine for recording: driver, CUPTI, other profilers, torch plugin, NVML, viewer");
  static DoctorArgs args;
  cmd->add_option("--python", args.python,
                  "The python whose torch the plugin must match (default: python3 on PATH)");
  cmd->add_option("--format", args.format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  cmd->footer("One line per check: ok, warn (works without it) or FAIL, with what to do.\n"
              "Exit codes: 0 nothing failed, 1 a check failed.");
  cmd->callback([] { run(args); });
}

namespace {
CommandRegistrar registrar(80, add_doctor_command);
}  // namespace

}  // namespace gpuscope::cli
