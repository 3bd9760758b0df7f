#include "cluster/cluster.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analyzer/ranks.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/settings.h"

extern char** environ;

namespace gpuscope::cluster {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDriverName = "gpuscope_cluster.py";

// The driver's answer on stdout: one summary per line, or one line
// {"error": "..."} when it or a task failed.
struct DriverRun {
  std::string out;
  int status = 0;
};

DriverRun run_driver(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw Error(std::string("cluster: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipefd[0]);
  posix_spawn_file_actions_addclose(&actions, pipefd[1]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    throw Error("cluster: cannot run " + argv[0] + " (" + std::strerror(rc) + "; set " +
                settings::name(settings::Id::kPython) + " to a Python 3 with python3-distributed)");
  }
  DriverRun r;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n > 0) r.out.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(pipefd[0]);
  while (::waitpid(pid, &r.status, 0) < 0 && errno == EINTR) {
  }
  return r;
}

// The driver's {"error": "..."} line, if it wrote one.
bool driver_error(const std::string& out, std::string& message) {
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    if (out.compare(start, 10, "{\"error\": ") == 0) {
      const auto j = nlohmann::json::parse(out.substr(start, end - start), nullptr, false);
      if (j.is_object() && j.contains("error") && j["error"].is_string()) {
        message = j["error"].get<std::string>();
        return true;
      }
    }
    start = end + 1;
  }
  return false;
}

std::string self_path() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cluster: cannot find this gpuscope (/proc/self/exe: " + ec.message() + ")");
  return self.string();
}

}  // namespace

std::string find_driver() {
  if (const char* env = settings::text(settings::Id::kClusterDriver)) {
    if (!fs::exists(env))
      throw Error(std::string(env) + ": " + settings::name(settings::Id::kClusterDriver) + " does not exist");
    return fs::absolute(env).string();
  }
  const fs::path self = fs::path(self_path()).parent_path();
  for (const fs::path& dir : {self, self / "../share/gpuscope", fs::path(GPUSCOPE_SOURCE_DIR) / "cluster"}) {
    std::error_code ec;
    const fs::path p = dir / kDriverName;
    if (fs::exists(p, ec)) return fs::canonical(p, ec).string();
  }
  throw Error(std::string("cluster: ") + kDriverName + " not found next to " + self.string() +
              ", in ../share/gpuscope or in the source tree (set " + settings::name(settings::Id::kClusterDriver) + ")");
}

void check_recordings(const std::vector<std::string>& paths) {
  std::vector<merge::Input> inputs;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;  // on the workers' file system only
    inputs.push_back(merge::open_input(p));
    inputs.back().reader.reset();  // 512 files stay within the open-file limit
  }
  if (!inputs.empty()) merge::check_same_job(inputs);
}

std::vector<FileSummary> summarize_on_dask(const std::vector<std::string>& paths, const Options& options) {
  std::vector<std::string> argv = {settings::value<settings::Id::kPython>(), find_driver(), "--gpuscope", self_path()};
  if (!options.scheduler.empty()) argv.insert(argv.end(), {"--scheduler", options.scheduler});
  if (options.workers > 0) argv.insert(argv.end(), {"--workers", std::to_string(options.workers)});
  if (!options.steps.empty()) argv.insert(argv.end(), {"--steps", options.steps});
  if (options.progress) argv.push_back("--progress");
  argv.push_back("--");
  for (const std::string& p : paths) argv.push_back(fs::absolute(p).string());
  const DriverRun run = run_driver(argv);
  std::string message;
  if (driver_error(run.out, message)) throw Error("cluster: " + message);
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0)
    throw Error("cluster: the Dask driver " + argv[1] + " failed (" +
                (WIFEXITED(run.status) ? "exit " + std::to_string(WEXITSTATUS(run.status))
                                       : "signal " + std::to_string(WTERMSIG(run.status))) +
                "; its messages are above)");
  std::vector<FileSummary> out = parse_summaries(run.out, "the Dask driver's output");
  if (out.size() != paths.size())
    throw Error("cluster: the Dask driver returned " + std::to_string(out.size()) + " summaries for " +
                std::to_string(paths.size()) + " recordings");
  // The workers saw absolute paths; the report names the files as given.
  for (size_t i = 0; i < paths.size(); ++i) out[i].path = paths[i];
  return out;
}

analyzer::Analysis reduce(const std::vector<FileSummary>& summaries) {
  if (summaries.empty()) throw Error("cluster: no recording summarized");
  std::vector<merge::Input> inputs;
  for (const FileSummary& s : summaries) inputs.push_back(as_input(s));
  merge::check_same_job(inputs);
  std::vector<analyzer::RankPass> passes;
  for (const FileSummary& s : summaries) passes.push_back(s.pass);
  analyzer::Analysis a = analyzer::cross_rank_report(passes);
  a.summary.recording = summaries.size() == 1 ? fs::path(summaries[0].path).filename().string()
                                              : std::to_string(summaries.size()) + " recordings, " +
                                                    fs::path(summaries.front().path).filename().string() + " ... " +
                                                    fs::path(summaries.back().path).filename().string();
  return a;
}

}  // namespace gpuscope::cluster
