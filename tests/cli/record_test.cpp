// `gpuscope record` (issue 23): concurrent runs naming one output, exactly
// one of which records into it; the job ends when gpuscope is killed; a file
// that is not a program is named as such; --help-env prints every setting.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/cli/cli_test_util.h"
#include "trace_formats/common/settings.h"

namespace gpuscope::cli::test {
namespace {

bool collector_built() { return fs::exists(std::string(GPUSCOPE_BINARY_DIR) + "/lib/libgpuscope_collector.so"); }

TEST(Record, ConcurrentRunsOnOneOutputExactlyOneWins) {
  if (!collector_built()) GTEST_SKIP() << "no collector in this build (CUDA headers missing)";
  constexpr int kRuns = 12, kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    TempDir tmp;
    const std::string out = tmp.file("x.db");
    // All start together: each waits for the go file, then runs record.
    std::string script;
    for (int i = 0; i < kRuns; ++i)
      script += "(while [ ! -e " + tmp.file("go") + " ]; do :; done; " + bin() + " record -o " + out +
                " -- sh -c 'exit 0' >" + tmp.file("log" + std::to_string(i)) + " 2>&1; echo $? >" +
                tmp.file("rc" + std::to_string(i)) + ") & ";
    script += "sleep 0.2; touch " + tmp.file("go") + "; wait\n";
    write_file(tmp.file("race.sh"), script);
    run("sh " + tmp.file("race.sh"));
    int wins = 0;
    for (int i = 0; i < kRuns; ++i) {
      const std::string rc = read_file(tmp.file("rc" + std::to_string(i)));
      const std::string log = read_file(tmp.file("log" + std::to_string(i)));
      if (rc == "0\n") {
        ++wins;
      } else {
        EXPECT_EQ(rc, "2\n") << log;
        EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
        EXPECT_NE(log.find(out + ": already exists"), std::string::npos) << log;
      }
    }
    EXPECT_EQ(wins, 1);
    const Result info = gpuscope("info " + out);
    EXPECT_EQ(info.exit_code, 0) << info.output;
    EXPECT_TRUE(info.has("gpuscope record")) << info.output;
  }
}

TEST(Record, ConcurrentRunsWithoutOutputGetANameEach) {
  if (!collector_built()) GTEST_SKIP() << "no collector in this build (CUDA headers missing)";
  TempDir tmp;
  std::string script = "cd " + tmp.path() + "\n";
  for (int i = 0; i < 6; ++i) script += bin() + " record -- sh -c 'exit 0' 2>/dev/null &\n";
  script += "wait\n";
  write_file(tmp.file("race.sh"), script);
  run("sh " + tmp.file("race.sh"));
  for (int n = 1; n <= 6; ++n) {
    const std::string db = tmp.file("gpuscope_" + std::to_string(n) + ".db");
    EXPECT_EQ(gpuscope("info " + db).exit_code, 0) << db;
  }
}

TEST(Record, ForceRefusesAFileAnotherRunIsRecording) {
  if (!collector_built()) GTEST_SKIP() << "no collector in this build (CUDA headers missing)";
  TempDir tmp;
  const std::string out = tmp.file("x.db");
  FILE* first = ::popen((bin() + " record -o " + out + " -- sleep 2 >/dev/null 2>&1").c_str(), "r");
  for (int i = 0; i < 100 && !fs::exists(out); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Result second = gpuscope("record --force -o " + out + " -- sh -c 'exit 0'");
  EXPECT_EQ(second.exit_code, 2) << second.output;
  EXPECT_TRUE(second.has(out + ": being recorded by another gpuscope record")) << second.output;
  EXPECT_EQ(::pclose(first), 0);
  EXPECT_EQ(gpuscope("info " + out).exit_code, 0);
  // Once that run is over, --force replaces the file.
  EXPECT_EQ(gpuscope("record --force -o " + out + " -- sh -c 'exit 0'").exit_code, 0);
}

// The live process whose command line is `sleep MARKER` (no pgrep needed).
pid_t pid_of_sleep(const std::string& marker) {
  const std::string wanted = std::string("sleep") + '\0' + marker + '\0';
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // A zombie's command line is empty: it no longer counts.
    if (read_file(e.path().string() + "/cmdline") == wanted) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

TEST(Record, JobEndsWhenGpuscopeIsKilled) {
  if (!collector_built()) GTEST_SKIP() << "no collector in this build (CUDA headers missing)";
  TempDir tmp;
  // A duration no other process uses, so that this job alone matches.
  const std::string marker = "3" + std::to_string(::getpid() % 1000) + ".5";
  const pid_t gs = fork();
  if (gs == 0) {
    freopen("/dev/null", "w", stderr);
    execl(bin().c_str(), "gpuscope", "record", "-o", tmp.file("x.db").c_str(), "--", "sleep", marker.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t job = 0;
  for (int i = 0; i < 250 && !job; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    job = pid_of_sleep(marker);
  }
  ASSERT_NE(job, 0) << "the job did not start";
  kill(gs, SIGKILL);
  waitpid(gs, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gone = kill(job, 0) != 0 || pid_of_sleep(marker) == 0;
  }
  if (!gone) kill(job, SIGKILL);
  EXPECT_TRUE(gone) << "the job outlived gpuscope by 2 s";
}

TEST(Record, AFileThatIsNotAProgramIsNamed) {
  TempDir tmp;
  const Result r = gpuscope("record -o " + tmp.file("x.db") + " -- /etc/passwd");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.lines(), 1) << r.output;
  EXPECT_TRUE(r.has("/etc/passwd: not executable")) << r.output;
  EXPECT_FALSE(fs::exists(tmp.file("x.db")));
  const Result missing = gpuscope("record -o " + tmp.file("x.db") + " -- no_such_program_xyz");
  EXPECT_TRUE(missing.has("command not found")) << missing.output;
}

// Names and lists that would record nothing, or under another name, are
// refused in one line with no file left (issue 50): `--trace ''` recorded no
// source at all, `-o 'r_%q{NOPE}.db'` silently became r_.db.
TEST(Record, ATraceListOrOutputNameThatMeansNothingIsRefused) {
  TempDir tmp;
  ScopedEnv unset("GS_NOPE_UNSET", nullptr), empty("GS_NOPE_EMPTY", "");
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"--trace '' -o x.db", "record: --trace names no source (known: cuda,nvtx,memory,torch,nvml,overhead)"},
           {"--trace 'cuda,,nvtx' -o x.db", "record: --trace 'cuda,,nvtx' has an empty source between commas"},
           {"--trace 'cuda,' -o x.db", "has an empty source between commas"},
           {"-o 'r_%q{GS_NOPE_UNSET}.db'",
            "record: -o r_%q{GS_NOPE_UNSET}.db: %q{GS_NOPE_UNSET} would expand to nothing: the environment variable "
            "'GS_NOPE_UNSET' is not set or is empty"},
           {"-o 'r_%q{GS_NOPE_EMPTY}.db'", "the environment variable 'GS_NOPE_EMPTY' is not set or is empty"}}) {
    SCOPED_TRACE(args);
    const Result r = run("cd " + tmp.path() + " && " + bin() + " record " + args + " -- true");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_EQ(r.lines(), 1) << r.output;
    EXPECT_TRUE(r.has(said)) << r.output;
    EXPECT_TRUE(listing(tmp.path()).empty()) << "left behind: " << listing(tmp.path()).front();
  }
  ScopedEnv set("GS_NOPE_SET", "rank3");
  const Result ok = run("cd " + tmp.path() + " && " + bin() + " record -o 'r_%q{GS_NOPE_SET}.db' -- true");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(fs::exists(tmp.file("r_rank3.db"))) << ok.output;
}

TEST(Record, HelpEnvPrintsEverySettingWithItsDefault) {
  const Result r = gpuscope("record --help-env");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const settings::Setting& s : settings::kSettings) {
    SCOPED_TRACE(s.name);
    const size_t at = r.output.find(std::string(s.name) + " ");
    ASSERT_NE(at, std::string::npos) << r.output;
    const std::string entry = r.output.substr(at, r.output.find(" GPUSCOPE_", at + 1) - at);
    EXPECT_NE(entry.find(std::string(s.type) + ", default: " + settings::shown_default(s)), std::string::npos) << entry;
    const std::string note = settings::record_note(s);
    if (!note.empty()) {
      EXPECT_NE(entry.find("(" + note + ")"), std::string::npos) << entry;
    }
    EXPECT_NE(entry.find(s.meaning), std::string::npos) << entry;
  }
  EXPECT_TRUE(r.has("W,N[,MS], default: 3,8,200 (record --full: 0)")) << r.output;
  EXPECT_TRUE(r.has("default: 0 (record: auto; record --full: 0)")) << r.output;
  // Listed in the command's help, and nothing is run.
  EXPECT_TRUE(gpuscope("help record").has("--help-env"));
  EXPECT_EQ(gpuscope("record --help-env -- false").exit_code, 0);
}

}  // namespace
}  // namespace gpuscope::cli::test
