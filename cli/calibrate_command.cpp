// `gpuscope calibrate [-o FILE] [--seconds S] [--device cuda|cpu] [--quick]`:
// bench/whatif/calibrate.py made a command (issue 48, item 4; docs/try.md,
// "Learning"): measures the what-if replay's speed table (schema
// gpuscope-calibration/1) on this machine's GPU with the Python that has torch.
// The archive ships the script under share/gpuscope/calibrate/.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/support/programs.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/text.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct CalibrateOptions {
  std::string output = "gpuscope_calibration.json";
  bool force = false;
  double seconds = 85;
  std::string device = "cuda";
  bool quick = false;
  std::string python = "python3";
};

// share/gpuscope/calibrate/calibrate.py beside the binary (build tree and archive).
std::string find_script() {
  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  const fs::path p = self / "../share/gpuscope/calibrate/calibrate.py";
  if (!fs::exists(p)) throw Error("calibrate: " + p.lexically_normal().string() + " is missing (a partial install?)");
  return fs::canonical(p).string();
}

int run_calibrate(const CalibrateOptions& opt) {
  if (opt.device != "cuda" && opt.device != "cpu") throw Error("calibrate: --device " + opt.device + ": cuda or cpu");
  if (fs::exists(opt.output) && !opt.force)
    throw Error("calibrate: " + opt.output + ": already exists (use --force to overwrite)");
  const std::string python = find_executable(opt.python);
  if (python.empty()) throw Error("calibrate: " + opt.python + ": " + executable_problem(opt.python));
  const std::string script = find_script();
  std::vector<std::string> args = {python, script, "--out", opt.output, "--seconds", std::to_string(opt.seconds),
                                   "--device", opt.device};
  if (opt.quick) args.push_back("--quick");
  std::fprintf(stderr, "gpuscope calibrate: measuring the what-if speed table on this %s for up to %.0f s (%s)\n",
               opt.device == "cuda" ? "GPU" : "CPU (a smoke test, not a calibration)", opt.seconds,
               terminal_safe(script).c_str());
  std::fflush(stderr);
  const pid_t child = fork();
  if (child < 0) throw Error(std::string("calibrate: fork failed: ") + std::strerror(errno));
  if (child == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(python.c_str(), argv.data());
    std::fprintf(stderr, "gpuscope: error: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("calibrate: " + script + " failed (" +
                (WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status)) : std::string("a signal")) +
                ")" + (fs::exists(opt.output) ? "; what it measured is in " + opt.output : ""));
  std::fprintf(stderr,
               "gpuscope calibrate: wrote %s. analyze does not read a table from here yet: its tables are "
               "analyzer/whatif/calibration/*.json, embedded at build time (bench/whatif/README.md)\n",
               terminal_safe(opt.output).c_str());
  return 0;
}

}  // namespace

static void add_calibrate_command(CLI::App& app) {
  static CalibrateOptions opt;
  auto* cmd = app.add_subcommand("calibrate",
                                 "Measure the what-if replay's speed table on this GPU (bench/whatif/calibrate.py)");
  cmd->add_option("-o,--output", opt.output, "The table (schema gpuscope-calibration/1)")->capture_default_str();
  cmd->add_flag("-f,--force", opt.force, "Overwrite the output");
  cmd->add_option("--seconds", opt.seconds, "Budget from the start; entries it cannot reach are listed as skipped")
      ->check(number_in(5, 86400))
      ->capture_default_str();
  cmd->add_option("--device", opt.device, "cuda, or cpu (a smoke test of the script, not a calibration)")
      ->capture_default_str();
  cmd->add_flag("--quick", opt.quick, "Tiny sizes (a smoke test)");
  cmd->add_option("--python", opt.python, "The Python with torch that measures")->capture_default_str();
  cmd->callback([] { exit_code = run_calibrate(opt); });
}

namespace {
CommandRegistrar registrar(78, add_calibrate_command);
}  // namespace

}  // namespace gpuscope::cli
