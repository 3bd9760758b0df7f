#include "cli/setup/torch_setup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cli/doctor/probes.h"
#include "cli/support/programs.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/plugin_cache.h"
#include "plugins/torch/build_info.h"

namespace gpuscope::setup {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNoOps = "until then jobs are recorded without torch ops";

// After doctor's kTorchScriptHead: what a build against this torch needs.
const std::string kQueryScript = std::string(doctor::kTorchScriptHead) + R"PY(
import os, sysconfig
say("torch_version", torch.__version__)
say("package", os.path.dirname(os.path.abspath(torch.__file__)))
try:
    say("cmake_prefix", torch.utils.cmake_prefix_path)
except Exception:
    pass
say("cxx11_abi", int(bool(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))))
say("multiarch", sysconfig.get_config_var("MULTIARCH") or "")
)PY";

bool has_config(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "TorchConfig.cmake", ec);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The compiler's own multiarch, for a Python that does not say it.
const char* built_multiarch() {
#if defined(__x86_64__)
  return "x86_64-linux-gnu";
#elif defined(__aarch64__)
  return "aarch64-linux-gnu";
#elif defined(__powerpc64__)
  return "powerpc64le-linux-gnu";
#else
  return "";
#endif
}

// $CXX's program ("ccache g++" -> the first word), else the usual names.
std::string find_compiler(std::string& missing) {
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) {
    std::string first = cxx;
    first = first.substr(0, first.find(' '));
    std::string found = cli::find_executable(first);
    if (found.empty())
      missing = std::string("the C++ compiler CXX=") + cxx + " (" + cli::executable_problem(first) + ")";
    return found;
  }
  for (const char* name : {"c++", "g++", "clang++"})
    if (std::string found = cli::find_executable(name); !found.empty()) return found;
  missing = "a C++ compiler (no c++, g++ or clang++ on PATH, CXX unset)";
  return {};
}

// Removes build folders (<torch root>/.build-<pid>-*) whose process is gone:
// a run killed mid-build leaves one, never a plugin.
void remove_stale_builds(const std::string& root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".build-", 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + 7, nullptr, 10);
    if (pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    fs::remove_all(e.path(), ec);
  }
}

// A build step: `argv` with stdout and stderr appended to `log`; `on_line` sees
// each new line while it runs. Returns its exit status (128+N for signal N).
int run_logged(const std::vector<std::string>& argv, const std::string& log,
               const std::function<void(const std::string&)>& on_line) {
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(log + ": " + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(fd);
  if (pid < 0) throw Error(std::string("setup torch: cannot start ") + argv[0] + ": " + std::strerror(errno));
  std::ifstream in(log);
  std::string partial;
  auto read_new = [&] {
    in.clear();
    char buf[4096];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      partial.append(buf, static_cast<size_t>(in.gcount()));
      for (size_t nl; (nl = partial.find('\n')) != std::string::npos; partial.erase(0, nl + 1))
        if (on_line) on_line(partial.substr(0, nl));
    }
  };
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    read_new();
    if (done == pid || (done < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// The first line of a log that says what went wrong, for the one-line error.
std::string first_error(const std::string& log) {
  std::istringstream lines(read_text(log));
  std::string fallback;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos ||
        line.find("ERROR") != std::string::npos) {
      const auto start = line.find_first_not_of(" \t");
      return start == std::string::npos ? line : line.substr(start);
    }
    if (!line.empty()) fallback = line;
  }
  return fallback;
}

// "[3/8] Building ..." (ninja) or "[ 37%] Building ..." (make) -> "3/8" or "37%".
std::string build_progress(const std::string& line) {
  if (line.size() < 3 || line[0] != '[') return {};
  const auto close = line.find(']');
  if (close == std::string::npos) return {};
  std::string inside = line.substr(1, close - 1);
  inside.erase(0, inside.find_first_not_of(' '));
  return inside.find_first_not_of("0123456789/%") == std::string::npos ? inside : std::string();
}

}  // namespace

TorchInfo parse_torch_info(const std::string& out) {
  TorchInfo t;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "torch_version")
      t.version = value;
    else if (key == "torch_error")
      t.error = value;
    else if (key == "package")
      t.package = value;
    else if (key == "cmake_prefix")
      t.cmake_prefix = value;
    else if (key == "cxx11_abi")
      t.cxx11_abi = value;
    else if (key == "multiarch")
      t.multiarch = value;
  }
  return t;
}

TorchInfo ask_python(const std::string& python, int timeout_ms) {
  const doctor::ProgramResult r = doctor::run_program({python, "-c", kQueryScript}, timeout_ms);
  if (!r.started) throw Error("setup torch: " + python + ": could not start it");
  if (r.timed_out) throw Error("setup torch: " + python + " did not finish `import torch` in time");
  TorchInfo t = parse_torch_info(r.out);
  t.python = python;
  if (!t.error.empty())
    throw Error("setup torch: " + python + " cannot import torch (" + t.error +
                "): pass --python the python your jobs run");
  if (t.version.empty()) {
    std::string err = r.err.substr(0, r.err.find_last_not_of("\n ") + 1);
    err = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    throw Error("setup torch: " + python + " failed (exit " + std::to_string(r.exit_code) + ")" +
                (err.empty() ? "" : ": " + err));
  }
  return t;
}

std::string find_torch_dir(const TorchInfo& torch, const std::string& given) {
  if (!given.empty()) {
    for (const fs::path& dir : {fs::path(given), fs::path(given) / "Torch", fs::path(given) / "share/cmake/Torch"})
      if (has_config(dir)) return fs::absolute(dir).lexically_normal().string();
    throw Error("setup torch: --torch-dir " + given + " holds no TorchConfig.cmake (nor Torch/ or share/cmake/Torch/)");
  }
  if (!torch.cmake_prefix.empty() && has_config(fs::path(torch.cmake_prefix) / "Torch"))
    return (fs::path(torch.cmake_prefix) / "Torch").lexically_normal().string();
  const std::string arch = torch.multiarch.empty() ? built_multiarch() : torch.multiarch;
  if (!arch.empty() && has_config("/usr/lib/" + arch + "/cmake/Torch")) return "/usr/lib/" + arch + "/cmake/Torch";
  return {};
}

std::string torch_dir_version(const std::string& dir) {
  std::istringstream lines(read_text(dir + "/TorchConfigVersion.cmake"));
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find("set(PACKAGE_VERSION \"");
    if (at == std::string::npos) continue;
    const auto start = at + std::strlen("set(PACKAGE_VERSION \""), end = line.find('"', start);
    return end == std::string::npos ? std::string() : line.substr(start, end - start);
  }
  return {};
}

Plan plan(const std::string& cache, const std::string& torch_version, bool force) {
  if (cache.empty()) throw Error("setup torch: no cache folder: HOME is not set; set GPUSCOPE_CACHE_DIR");
  Plan p;
  p.plugin = plugin_cache::torch_plugin_path(cache, torch_version);
  if (p.plugin.empty()) throw Error("setup torch: torch reports no version");
  std::error_code ec;
  p.reuse = !force && fs::exists(p.plugin, ec);
  const std::string mine = plugin_cache::folder_name(torch_version);
  for (const auto& v : plugin_cache::cached_torch_versions(cache))
    if (v != mine) p.others.push_back(v);
  return p;
}

Tools find_tools(const std::string& python_dir) {
  Tools t;
  std::vector<std::string> missing;
  t.cmake = cli::find_executable("cmake");
  if (t.cmake.empty() && !python_dir.empty()) t.cmake = cli::find_executable(python_dir + "/cmake");
  if (t.cmake.empty()) missing.push_back("cmake (apt-get install cmake, or pip install cmake)");
  std::string no_compiler;
  t.cxx = find_compiler(no_compiler);
  t.cxx_from_env = std::getenv("CXX") && *std::getenv("CXX");
  if (t.cxx.empty()) missing.push_back(no_compiler);
  if (!cli::find_executable("ninja").empty())
    t.generator = "Ninja";
  else if (!cli::find_executable("make").empty())
    t.generator = "Unix Makefiles";
  else
    missing.push_back("make or ninja");
  if (missing.empty()) return t;
  std::string list;
  for (size_t i = 0; i < missing.size(); ++i)
    list += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  throw Error("setup torch: cannot build the torch plugin without " + list +
              " (Ubuntu: apt-get install g++ make cmake); " + kNoOps);
}

std::string find_sources(const std::string& exe_dir) {
  const fs::path dir = (fs::path(exe_dir) / "../share/gpuscope/torch-plugin").lexically_normal();
  std::error_code ec;
  if (!fs::exists(dir / "CMakeLists.txt", ec) || !fs::exists(dir / "plugins/torch/plugin_init.cpp", ec))
    throw Error("setup torch: the plugin's sources are not in " + dir.string() +
                " (reinstall gpuscope with its share/ folder); " + kNoOps);
  return dir.string();
}

std::string build_plugin(const BuildRequest& q, const std::string& cache) {
  const std::string root = plugin_cache::torch_root(cache);
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error("setup torch: cannot create " + root + ": " + ec.message());
  remove_stale_builds(root);
  std::string work = root + "/.build-" + std::to_string(getpid()) + "-XXXXXX";
  if (!mkdtemp(work.data()))
    throw Error("setup torch: cannot create a build folder in " + root + ": " + std::strerror(errno));
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code e;
      fs::remove_all(dir, e);
    }
  } cleanup{work};
  const std::string log = work + "/build.log";
  // Kept for the user when a step fails: the build folder goes.
  const std::string kept_log = root + "/setup-" + plugin_cache::folder_name(q.torch.version) + ".log";
  auto failed = [&](const std::string& what) {
    fs::copy_file(log, kept_log, fs::copy_options::overwrite_existing, ec);
    const std::string why = first_error(log);
    return Error("setup torch: " + what + (why.empty() ? "" : ": " + why) + " (log: " + kept_log + ")");
  };
  auto say = [&](const std::string& text) {
    if (q.progress) q.progress(text);
  };

  // Torch's CMake config first; a CUDA build's config also wants the CUDA
  // toolkit, so without one the build uses torch's headers and libraries.
  const bool package_usable = !q.torch.package.empty() && fs::exists(q.torch.package + "/include/torch", ec) &&
                              fs::exists(q.torch.package + "/lib/libtorch_cpu.so", ec);
  std::vector<std::vector<std::string>> configs;
  if (!q.torch_dir.empty()) configs.push_back({"-DTorch_DIR=" + q.torch_dir});
  if (package_usable)
    configs.push_back({"-DGPUSCOPE_TORCH_PACKAGE=" + q.torch.package,
                       "-DGPUSCOPE_TORCH_CXX11_ABI=" + (q.torch.cxx11_abi.empty() ? "1" : q.torch.cxx11_abi)});
  if (configs.empty())
    throw Error("setup torch: torch " + q.torch.version + " of " + q.torch.python +
                " has no CMake config (TorchConfig.cmake) nor headers: pass --torch-dir");
  std::string note;
  const std::string build = work + "/build";
  for (size_t i = 0; i < configs.size(); ++i) {
    say("configuring");
    fs::remove_all(build, ec);
    std::vector<std::string> argv{q.tools.cmake, "-S", q.sources, "-B", build, "-G", q.tools.generator,
                                  "-DCMAKE_BUILD_TYPE=RelWithDebInfo"};
    if (!q.tools.cxx_from_env) argv.push_back("-DCMAKE_CXX_COMPILER=" + q.tools.cxx);
    argv.insert(argv.end(), configs[i].begin(), configs[i].end());
    if (run_logged(argv, log, nullptr) == 0) break;
    const bool wants_cuda = read_text(log).find("uses CUDA but I cannot find") != std::string::npos;
    if (i + 1 == configs.size() || !wants_cuda) throw failed("configuring the plugin's build failed");
    note = "torch's CMake config wants the CUDA toolkit, which is not here; built against torch's headers in " +
           q.torch.package + " instead";
  }
  std::vector<std::string> argv{q.tools.cmake, "--build", build, "--target", "gpuscope_torch"};
  if (!std::getenv("CMAKE_BUILD_PARALLEL_LEVEL"))
    argv.insert(argv.end(), {"--parallel", std::to_string(std::max(1u, std::thread::hardware_concurrency()))});
  say("compiling");
  if (run_logged(argv, log, [&](const std::string& line) {
        if (const std::string p = build_progress(line); !p.empty()) say("compiling " + p);
      }) != 0)
    throw failed("compiling the plugin failed");

  // The plugin must load into this torch and say it was built for it.
  say("checking");
  const std::string built = build + "/" + plugin_cache::kTorchPluginFile;
  doctor::PluginLookup fixed;
  fixed.env_path = built;
  doctor::PluginProbe plugin;
  const doctor::PythonProbe py = doctor::probe_python(q.torch.python, true, fixed, plugin, 120000);
  if (!py.plugin_error.empty())
    throw Error("setup torch: the plugin built does not load into torch " + q.torch.version + ": " + py.plugin_error);
  if (!py.plugin_says || !torch_plugin::same_torch_release(py.plugin_built_for, q.torch.version))
    throw Error("setup torch: the plugin built says it is for torch " +
                (py.plugin_says ? py.plugin_built_for : std::string("(nothing)")) + ", not " + q.torch.version + ": " +
                (q.torch_dir.empty() ? q.torch.package : q.torch_dir) + " is another torch's (pass --torch-dir)");

  // Into place in one rename: the cache never holds half a plugin.
  const std::string entry = fs::path(q.plan.plugin).parent_path().string();
  fs::create_directories(entry, ec);
  if (ec) throw Error("setup torch: cannot create " + entry + ": " + ec.message());
  if (std::rename(built.c_str(), q.plan.plugin.c_str()) != 0)
    throw Error("setup torch: cannot move the plugin to " + q.plan.plugin + ": " + std::strerror(errno));
  fs::remove(kept_log, ec);
  return note;
}

}  // namespace gpuscope::setup
