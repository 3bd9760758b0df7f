// Output files of analyze, diff, check, export and import (issue 23): a
// symlink planted at a predictable temporary name is never followed, an
// output never replaces an input (not even with --force), and SIGTERM in the
// middle of writing leaves no temporary file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

const char kPrecious[] = "precious, not gpuscope's to write\n";

long last_pid() {
  long pid = 0;
  std::ifstream("/proc/sys/kernel/ns_last_pid") >> pid;
  return pid;
}

// Symlinks to `victim` at the temporary names gpuscope used to write (the
// output's name with the next pids in it), as another user of a shared
// folder could plant them.
void plant(const std::string& dir, const std::string& prefix, const std::string& suffix, const std::string& victim) {
  const long next = last_pid() + 1;
  for (long pid = next; pid < next + 3000; ++pid)
    fs::create_symlink(victim, dir + "/" + prefix + std::to_string(pid) + suffix);
}

struct Planted {
  const char* what;
  std::string command;  // %D is the folder
  std::string prefix;   // the old temporary name, before the pid
  std::string output;
};

std::string expand(std::string s, const std::string& dir) {
  for (size_t p; (p = s.find("%D")) != std::string::npos;) s.replace(p, 2, dir);
  return s;
}

TEST(Outputs, SymlinksAtTheOldTemporaryNamesAreNotFollowed) {
  const std::string rec = data("nvtx_loop.db");
  const std::vector<Planted> cases = {
      {"analyze -o", "analyze " + rec + " -o %D/report.txt", "report.txt.tmp", "report.txt"},
      {"diff --markdown", "diff " + rec + " " + rec + " -q --markdown %D/d.md", "d.md.tmp", "d.md"},
      {"check --json", "check " + rec + " --budget %D/budget.json -q --json %D/c.json", "c.json.tmp", "c.json"},
      {"export --chrome", "export -q " + rec + " --chrome %D/t.json", ".t.json.tmp-", "t.json"},
      {"import -o", "import -q " + std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json -o %D/i.db",
       ".i.db.importing-", "i.db"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir tmp;
    const std::string victim = tmp.file("victim.txt");
    write_file(victim, kPrecious);
    write_file(tmp.file("budget.json"), R"({"max_step_ms_median": 1000})");
    plant(tmp.path(), c.prefix, "", victim);
    const Result r = gpuscope(expand(c.command, tmp.path()));
    EXPECT_LE(r.exit_code, 1) << r.output;
    EXPECT_TRUE(read_file(victim) == kPrecious) << "the victim was written through a planted symlink";
    const std::string out = tmp.file(c.output);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(out))) << out << " is not a file of its own";
    EXPECT_GT(fs::file_size(out), 0u);
    // Every planted link is still there, untouched, and nothing else was left.
    size_t links = 0, others = 0;
    for (const auto& e : fs::directory_iterator(tmp.path())) {
      if (fs::is_symlink(e.symlink_status())) ++links;
      else if (e.path().filename().string().starts_with(".")) ++others;
    }
    EXPECT_EQ(links, 3000u);
    EXPECT_EQ(others, 0u) << "a temporary file was left behind";
  }
}

// The viewer's screenshot used to go through `.NAME.tmp.png` next to the
// target, a fixed name that QImage::save followed when it was a symlink.
TEST(Outputs, ScreenshotDoesNotFollowASymlinkAtItsOldTemporaryName) {
  if (!fs::exists(std::string(GPUSCOPE_BINARY_DIR) + "/bin/gpuscope-view")) GTEST_SKIP() << "no viewer in this build";
  TempDir tmp;
  const std::string victim = tmp.file("victim.txt");
  write_file(victim, kPrecious);
  fs::create_symlink(victim, tmp.file(".shot.png.tmp.png"));
  const Result r = gpuscope("view " + data("nvtx_loop.db") + " --screenshot " + tmp.file("shot.png"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(read_file(victim) == kPrecious) << "the victim was written through a planted symlink";
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(tmp.file("shot.png"))));
  EXPECT_GT(fs::file_size(tmp.file("shot.png")), 1000u);
  size_t hidden = 0;
  for (const auto& e : fs::directory_iterator(tmp.path()))
    hidden += e.path().filename().string().starts_with(".") && !fs::is_symlink(e.symlink_status());
  EXPECT_EQ(hidden, 0u) << "a temporary file was left behind";
}

TEST(Outputs, AnOutputNeverReplacesAnInputEvenWithForce) {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db"), t = tmp.file("t.json"), k = tmp.file("k.db"),
                    bj = tmp.file("b.json"), link = tmp.file("link.db");
  fs::copy_file(data("nvtx_loop.db"), a);
  fs::copy_file(data("nvtx_loop.db"), b);
  fs::copy_file(data("nvtx_loop.db"), k);
  fs::copy_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json", t);
  write_file(bj, R"({"max_step_ms_median": 1000})");
  fs::create_symlink(a, link);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"analyze " + a + " -o " + a + " --force", a},
      {"analyse " + a + " -o " + link + " --force", link},
      {"analyze " + a + " -o " + tmp.path() + "/./a.db --force", "a.db"},
      {"export " + a + " --chrome " + a + " --force", a},
      {"export " + a + " --perfetto " + link + " --force", link},
      {"import " + t + " -o " + t + " --force", t},
      {"diff " + a + " " + b + " --markdown " + a + " --force", a},
      {"diff " + a + " " + b + " --json " + b + " --force", b},
      {"check " + k + " --budget " + bj + " --json " + bj + " --force", bj},
      {"check " + k + " --budget " + bj + " --markdown " + k + " --force", k},
      {"view " + a + " --screenshot " + a + " --force", a},
  };
  const std::string before_a = read_file(a), before_b = read_file(b), before_t = read_file(t),
                    before_k = read_file(k), before_bj = read_file(bj);
  for (const auto& [command, file] : cases) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.lines(), 1) << r.output;
    EXPECT_TRUE(r.has(file)) << r.output;
    EXPECT_TRUE(r.has("is an input of this command")) << r.output;
  }
  EXPECT_TRUE(read_file(a) == before_a) << a;
  EXPECT_TRUE(read_file(b) == before_b) << b;
  EXPECT_TRUE(read_file(t) == before_t) << t;
  EXPECT_TRUE(read_file(k) == before_k) << k;
  EXPECT_TRUE(read_file(bj) == before_bj) << bj;
  // Two outputs of one command naming one file.
  const Result two = gpuscope("export " + a + " --chrome " + tmp.file("x.json") + " --perfetto " + tmp.file("x.json") +
                              " --force");
  EXPECT_EQ(two.exit_code, 2) << two.output;
  EXPECT_EQ(two.lines(), 1) << two.output;
  EXPECT_TRUE(two.has("x.json: named for two outputs")) << two.output;
  EXPECT_FALSE(fs::exists(tmp.file("x.json")));
}

// A dangling symlink at an output counts as an existing file (issue 39): every
// command refuses it without --force and leaves it as it was.
TEST(Outputs, ADanglingSymlinkIsAnExistingOutput) {
  TempDir tmp;
  const std::string a = tmp.file("a.db"), b = tmp.file("b.db"), t = tmp.file("t.json"), bj = tmp.file("b.json"),
                    link = tmp.file("link.out"), target = tmp.file("nowhere");
  fs::copy_file(data("nvtx_loop.db"), a);
  fs::copy_file(data("nvtx_loop.db"), b);
  fs::copy_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json", t);
  write_file(bj, R"({"max_step_ms_median": 1000})");
  fs::create_symlink(target, link);
  for (const std::string& command :
       {"analyze " + a + " -o " + link, "export " + a + " --chrome " + link, "export " + a + " --perfetto " + link,
        "import " + t + " -o " + link, "diff " + a + " " + b + " --markdown " + link,
        "check " + a + " --budget " + bj + " --json " + link, "cluster --from-summaries " + bj + " -o " + link}) {
    SCOPED_TRACE(command);
    const Result r = gpuscope(command);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.lines(), 1) << r.output;
    EXPECT_TRUE(r.has(link + ": already exists; use --force to overwrite")) << r.output;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_FALSE(fs::exists(target));
  }
  const Result forced = gpuscope("analyze " + a + " -o " + link + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_FALSE(fs::exists(target));
}

pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

bool hidden_file_in(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(".")) return true;
  return false;
}

// Starts the command, waits for its temporary file, sends SIGTERM. Returns
// false when the command finished before its temporary file was seen.
bool terminate_mid_write(const std::vector<std::string>& args, const std::string& dir, int* status) {
  const pid_t pid = spawn(args);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (hidden_file_in(dir)) {
      kill(pid, SIGTERM);
      waitpid(pid, status, 0);
      return true;
    }
    if (waitpid(pid, status, WNOHANG) == pid) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  kill(pid, SIGKILL);
  waitpid(pid, status, 0);
  return false;
}

struct Interrupted {
  const char* what;
  std::string input;
  std::vector<std::string> args;  // after the binary; %O is the output
  std::string output;
  bool tmpdir = false;  // TMPDIR is the test's folder: the temporary recording of a trace lands there
};

TEST(Outputs, SigtermMidWriteLeavesNoTemporaryFile) {
  const std::vector<Interrupted> cases = {
      {"export --chrome .gz", unpacked_data("advisor_recompile.db"), {"export", "-q", "%I", "--chrome", "%O"}, "big.json.gz"},
      {"export --perfetto", unpacked_data("advisor_recompile.db"), {"export", "-q", "%I", "--perfetto", "%O"}, "big.pftrace"},
      {"import", data("mlp_h200_torch_profiler.json.gz"), {"import", "-q", "%I", "-o", "%O"}, "big.db"},
      {"analyze a trace", data("mlp_h200_torch_profiler.json.gz"), {"analyze", "%I"}, "", true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    bool interrupted = false;
    for (int attempt = 0; attempt < 5 && !interrupted; ++attempt) {
      TempDir tmp;
      std::vector<std::string> args{bin()};
      for (const auto& a : c.args) args.push_back(a == "%O" ? tmp.file(c.output) : a == "%I" ? c.input : a);
      int status = 0;
      const char* old_tmpdir = std::getenv("TMPDIR");
      const std::string saved = old_tmpdir ? old_tmpdir : "";
      if (c.tmpdir) setenv("TMPDIR", tmp.path().c_str(), 1);
      const bool signalled = terminate_mid_write(args, tmp.path(), &status);
      if (c.tmpdir && old_tmpdir) setenv("TMPDIR", saved.c_str(), 1);
      else if (c.tmpdir) unsetenv("TMPDIR");
      // Finished between the look and the signal: only the output may be there.
      if (!signalled || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        for (const auto& name : listing(tmp.path())) EXPECT_EQ(name, c.output);
        continue;
      }
      interrupted = true;
      EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "status " << status;
      EXPECT_TRUE(listing(tmp.path()).empty()) << "left behind: " << listing(tmp.path()).front();
    }
    EXPECT_TRUE(interrupted) << "the command never showed a temporary file, or always finished first";
  }
}

}  // namespace
}  // namespace gpuscope::cli::test
