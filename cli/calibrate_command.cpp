// `gpuscope calibrate [-o FILE] [--seconds S] [--device cuda|cpu] [--quick]`:
// bench/whatif/calibrate.py made a command (issue 48, item 4; docs/try.md,
// "Learning"): measures the what-if replay's speed table (schema
// gpuscope-calibration/1) on this machine's GPU with the Python that has torch.
// The archive ships the script under share/gpuscope/calibrate/. Without -o the
// table goes into the cache, <cache>/calibration/<gpu>.json, where `analyze`
// finds it for a GPU that has no embedded table.
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/support/programs.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/text.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct CalibrateOptions {
  std::string output;  // empty: the cache
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

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": letters and digits kept
// (lower case), every other run of characters one '-'.
std::string calibration_file_name(std::string_view device) {
  std::string out;
  for (const char ch : device) {
    if (std::isalnum(static_cast<unsigned char>(ch))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return (out.empty() ? "unknown" : out) + ".json";
}

// The device a table was measured on ("" when the file says none).
std::string device_of(const std::string& path) {
  std::ifstream f(path);
  const auto j = nlohmann::json::parse(f, nullptr, false);
  return j.is_object() && j.contains("device") && j["device"].is_string() ? j["device"].get<std::string>() : "";
}

int run_calibrate(const CalibrateOptions& given) {
  CalibrateOptions opt = given;
  if (opt.device != "cuda" && opt.device != "cpu") throw Error("calibrate: --device " + opt.device + ": cuda or cpu");
  // Into the cache: measured under a name of its own, then named after the GPU
  // it measured (replacing that GPU's earlier table).
  std::string cache_folder;
  if (opt.output.empty()) {
    const std::string cache = plugin_cache::cache_dir();
    if (cache.empty()) throw Error("calibrate: no cache folder (HOME is not set): give -o FILE or set GPUSCOPE_CACHE_DIR");
    cache_folder = (fs::path(cache) / "calibration").string();
    std::error_code ec;
    fs::create_directories(cache_folder, ec);
    if (ec) throw Error("calibrate: " + cache_folder + ": " + ec.message());
    opt.output = (fs::path(cache_folder) / (".calibrating-" + std::to_string(getpid()) + ".json")).string();
    fs::remove(opt.output, ec);
  }
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
  if (!cache_folder.empty()) {
    const std::string device = device_of(opt.output);
    const std::string table = (fs::path(cache_folder) / calibration_file_name(device)).string();
    const bool replaced = fs::exists(table);
    std::error_code ec;
    fs::rename(opt.output, table, ec);
    if (ec) throw Error("calibrate: " + table + ": " + ec.message() + " (the table is in " + opt.output + ")");
    std::fprintf(stderr,
                 "gpuscope calibrate: wrote %s%s. analyze uses it for recordings made on %s when no table for that GPU "
                 "is built in (the report names the table it used)\n",
                 terminal_safe(table).c_str(), replaced ? " (replacing the table measured before)" : "",
                 terminal_safe(device.empty() ? std::string("this GPU") : device).c_str());
    return 0;
  }
  std::fprintf(stderr,
               "gpuscope calibrate: wrote %s. analyze uses it with --calibration %s, or for a GPU without a built-in "
               "table once it is in the cache (without -o, calibrate writes it there)\n",
               terminal_safe(opt.output).c_str(), terminal_safe(opt.output).c_str());
  return 0;
}

}  // namespace

static void add_calibrate_command(CLI::App& app) {
  static CalibrateOptions opt;
  auto* cmd = app.add_subcommand("calibrate",
                                 "Measure the what-if replay's speed table on this GPU (bench/whatif/calibrate.py)");
  cmd->add_option("-o,--output", opt.output,
                  "The table (schema gpuscope-calibration/1); default: <cache>/calibration/<gpu>.json, where analyze "
                  "finds it");
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
