#include "cli/doctor/probes.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collector/cupti_locate.h"
#include "trace_formats/common/plugin_cache.h"
#include "trace_formats/common/settings.h"

extern char** environ;

namespace gpuscope::doctor {

const char* const kTorchScriptHead = R"PY(
import sys
def say(key, value):
    print(key + "=" + str(value).replace("\n", " "), flush=True)
try:
    import torch
except Exception as e:
    say("torch_error", type(e).__name__ + ": " + str(e))
    sys.exit(0)
)PY";

namespace {

// After kTorchScriptHead: once torch's version is known the
// script asks for the plugin to load (plugin_wanted=1; the answer, a path or
// an empty line, comes on stdin), and loads it the way the collector does
// (RTLD_NOW, RTLD_LOCAL) into a process that runs this torch.
const std::string kPythonScript = std::string(kTorchScriptHead) + R"PY(
say("torch_version", torch.__version__)
try:
    import importlib.util
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        say("nvidia_dir", list(spec.submodule_search_locations)[0])
except Exception:
    pass
try:
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "/libcupti.so" in path:
                say("cupti", path)
                break
except OSError:
    pass
say("plugin_wanted", 1)
plugin = sys.stdin.readline().strip()
if plugin:
    import ctypes, os
    try:
        lib = ctypes.CDLL(plugin, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as e:
        say("plugin_error", e)
    else:
        f = getattr(lib, "gpuscope_plugin_built_for", None)
        if f is not None:
            f.restype = ctypes.c_char_p
            say("plugin_built_for", f().decode(errors="replace"))
        else:
            say("plugin_silent", 1)
)PY";

template <class F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown error";
}

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  575.57.08  Sat ..." -> "575.57.08".
std::string kernel_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return {};
  std::istringstream words(line);
  for (std::string w; words >> w;) {
    if (w.size() >= 3 && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
        w.find_first_not_of("0123456789.") == std::string::npos)
      return w;
  }
  return {};
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of("\n \t");
  if (end == std::string::npos) return {};
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

DriverProbe probe_driver(const char* library) {
  DriverProbe d;
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    d.load_error = dl_error();
    return d;
  }
  d.loaded = true;
  auto get = symbol<int (*)(int*)>(lib, "cuDriverGetVersion");
  d.result = get ? get(&d.cuda_version) : -1;
  d.driver_version = kernel_driver_version();
  return d;
}

CuptiProbe probe_cupti(const PythonProbe& py) {
  CuptiProbe c;
  // The job's torch loads CUDA from its wheels: search them as the collector
  // searches the folders of the CUDA libraries loaded in the job.
  std::vector<std::string> dirs;
  if (!py.nvidia_dir.empty()) dirs.push_back(py.nvidia_dir + "/cuda_cupti/lib");
  void* lib = collector::open_cupti(dirs);
  if (!lib) return c;
  c.found = true;
  link_map* map = nullptr;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) c.path = map->l_name;
  auto get = symbol<int (*)(uint32_t*)>(lib, "cuptiGetVersion");
  c.result = get ? get(&c.api_version) : -1;
  return c;
}

Environment probe_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env.emplace(std::string(*e, static_cast<size_t>(eq - *e)), std::string(eq + 1));
  }
  return env;
}

PluginLookup plugin_lookup(const CollectorProbe& collector) {
  PluginLookup l;
  l.env_path = settings::value<settings::Id::kTorchPlugin>();
  l.cache = plugin_cache::cache_dir();
  if (!collector.path.empty()) {
    const auto slash = collector.path.rfind('/');
    l.collector_dir = slash == std::string::npos ? std::string(".") : collector.path.substr(0, slash);
  }
  return l;
}

PluginProbe probe_plugin(const PluginLookup& lookup, const std::string& torch_version) {
  PluginProbe p;
  const auto candidates =
      plugin_cache::torch_plugin_candidates(lookup.env_path, lookup.cache, torch_version, lookup.collector_dir);
  for (const auto& c : candidates) {
    p.searched += (p.searched.empty() ? "" : ", ") + c.path;
    if (!p.exists && access(c.path.c_str(), R_OK) == 0) p.path = c.path, p.exists = true, p.origin = c.origin;
  }
  if (!p.exists && !candidates.empty())
    p.path = candidates.front().path, p.origin = candidates.front().origin;
  if (lookup.env_path.empty()) p.cached = plugin_cache::cached_torch_versions(lookup.cache);
  return p;
}

void parse_python_answer(const std::string& out, PythonProbe& py) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "torch_version") py.torch_version = value;
    else if (key == "torch_error") py.torch_error = value;
    else if (key == "cupti") py.torch_cupti = value;
    else if (key == "nvidia_dir") py.nvidia_dir = value;
    else if (key == "plugin_error") py.plugin_error = value;
    else if (key == "plugin_built_for") py.plugin_says = true, py.plugin_built_for = value;
  }
}

PythonProbe probe_python(const std::string& python, bool given, const PluginLookup& lookup, PluginProbe& plugin,
                         int timeout_ms) {
  PythonProbe py;
  py.given = given;
  py.python = python;
  py.found = !python.empty() && access(python.c_str(), X_OK) == 0;
  plugin = probe_plugin(lookup, "");
  if (!py.found) return py;
  const Exchange which_plugin{"plugin_wanted=1", [&](const std::string& out) {
                                PythonProbe said;
                                parse_python_answer(out, said);
                                plugin = probe_plugin(lookup, said.torch_version);
                                py.plugin_tried = plugin.exists;
                                return plugin.exists ? plugin.path : std::string();
                              }};
  ProgramResult r = run_program({python, "-c", kPythonScript}, timeout_ms, &which_plugin);
  py.timed_out = r.timed_out;
  py.exit_code = r.exit_code;
  py.error = last_line(r.err);
  if (!r.started) py.error = "could not start it";
  parse_python_answer(r.out, py);
  // Torch imported, then the process died: loading the plugin killed it.
  if (!py.torch_version.empty() && py.plugin_tried && r.exit_code != 0 && py.plugin_error.empty() &&
      !py.plugin_says)
    py.plugin_error = "python ended with status " + std::to_string(r.exit_code) + " loading it" +
                      (py.error.empty() ? "" : ": " + py.error);
  return py;
}

NvmlProbe probe_nvml(const char* library) {
  NvmlProbe n;
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    n.load_error = dl_error();
    return n;
  }
  n.loaded = true;
  auto init = symbol<int (*)()>(lib, "nvmlInit_v2");
  auto error_string = symbol<const char* (*)(int)>(lib, "nvmlErrorString");
  auto count = symbol<int (*)(unsigned*)>(lib, "nvmlDeviceGetCount_v2");
  auto version = symbol<int (*)(char*, unsigned)>(lib, "nvmlSystemGetDriverVersion");
  auto shutdown = symbol<int (*)()>(lib, "nvmlShutdown");
  n.init_result = init ? init() : -1;
  if (n.init_result != 0) {
    if (n.init_result != -1 && error_string) n.init_error = error_string(n.init_result);
    return n;
  }
  if (count && count(&n.devices) != 0) n.devices = 0;
  char text[96] = {};
  if (version && version(text, sizeof text) == 0) n.driver_version = text;
  if (shutdown) shutdown();
  return n;
}

ViewerProbe probe_viewer(const std::string& path) {
  ViewerProbe v;
  v.path = path;
  v.exists = access(path.c_str(), X_OK) == 0;
  if (!v.exists) return v;
  ProgramResult r = run_program({"ldd", path}, 10000);
  v.ldd_ran = r.started && !r.timed_out && r.exit_code == 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("=> not found") == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t");
    const auto end = line.find_first_of(" \t", start);
    if (start != std::string::npos) v.missing.push_back(line.substr(start, end - start));
  }
  return v;
}

ProgramResult run_program(const std::vector<std::string>& argv, int timeout_ms, const Exchange* exchange) {
  ProgramResult r;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0) return r;
  // stdin a socket, so that an answer to a program that has gone raises no SIGPIPE (MSG_NOSIGNAL).
  if (pipe2(err, O_CLOEXEC) != 0 || (exchange && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)) {
    for (int fd : {out[0], out[1], err[0], err[1]})
      if (fd >= 0) close(fd);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout ends its children too
    const int input = exchange ? in[1] : open("/dev/null", O_RDONLY);
    if (input >= 0) dup2(input, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (in[1] >= 0) close(in[1]);
  if (pid < 0) {
    for (int fd : {out[0], err[0], in[0]})
      if (fd >= 0) close(fd);
    return r;
  }
  auto close_stdin = [&] {
    if (in[0] >= 0) close(in[0]);
    in[0] = -1;
  };
  auto maybe_answer = [&] {
    if (in[0] < 0) return;
    const size_t at = r.out.find(exchange->prompt + "\n");
    if (at == std::string::npos || (at > 0 && r.out[at - 1] != '\n')) return;
    const std::string line = exchange->answer(r.out) + "\n";
    for (size_t sent = 0; sent < line.size();) {
      const ssize_t n = send(in[0], line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    close_stdin();
  };
  r.started = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
        if (i == 0) maybe_answer();
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  close_stdin();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  if (r.exit_code == 127 && r.out.empty() && r.err.empty()) r.started = false;  // exec failed
  return r;
}

}  // namespace gpuscope::doctor
