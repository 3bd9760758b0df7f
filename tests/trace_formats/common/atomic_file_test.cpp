// AtomicFile and check_outputs (common/atomic_file.h): temporary files never
// follow a planted symlink, are gone after every exit path, including
// SIGTERM; outputs never name an input or each other.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/error.h"
#include "tests/support/files.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

struct Folder {
  Folder() {
    path = (fs::temp_directory_path() / ("atomic_file_" + std::to_string(getpid()) + "_" + std::to_string(n++))).string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return path + "/" + name; }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), fs::directory_iterator())); }
  std::string path;
  static inline int n = 0;
};

using test_support::read_file;

TEST(AtomicFile, CommitRenamesUncommittedLeavesNothing) {
  Folder f;
  {
    AtomicFile a(f.file("out.txt"));
    a.write("hello");
    EXPECT_EQ(fs::path(a.temp_path()).parent_path(), fs::path(f.path));
    EXPECT_FALSE(fs::exists(f.file("out.txt")));
    a.commit();
  }
  EXPECT_EQ(read_file(f.file("out.txt")), "hello");
  { AtomicFile b(f.file("other.txt")); b.write("x"); }
  EXPECT_EQ(f.entries(), 1u);
  write_file_atomically(f.file("out.txt"), "again", /*force=*/true);
  EXPECT_EQ(read_file(f.file("out.txt")), "again");
  EXPECT_EQ(f.entries(), 1u);
}

// A name taken between the check and the commit (another process, a planted
// symlink, dangling too) is never replaced without --force, and the
// temporary file goes.
TEST(AtomicFile, CommitNeverReplacesANameTakenMeanwhile) {
  Folder f;
  {
    AtomicFile a(f.file("out.txt"));
    a.write("mine");
    std::ofstream(f.file("out.txt")) << "theirs";
    try {
      a.commit();
      ADD_FAILURE() << "replaced a file created meanwhile";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), f.file("out.txt") + ": already exists; use --force to overwrite");
    }
  }
  EXPECT_EQ(read_file(f.file("out.txt")), "theirs");
  EXPECT_EQ(f.entries(), 1u);

  fs::create_symlink(f.file("nowhere"), f.file("link.txt"));
  EXPECT_THROW(write_file_atomically(f.file("link.txt"), "x", false), Error);
  EXPECT_TRUE(fs::is_symlink(f.file("link.txt")));
  EXPECT_FALSE(fs::exists(f.file("nowhere")));
  EXPECT_EQ(f.entries(), 2u);

  write_file_atomically(f.file("link.txt"), "forced", true);
  EXPECT_FALSE(fs::is_symlink(f.file("link.txt")));
  EXPECT_EQ(read_file(f.file("link.txt")), "forced");
  write_file_atomically(f.file("fresh.txt"), "new", false);
  EXPECT_EQ(read_file(f.file("fresh.txt")), "new");
  EXPECT_EQ(f.entries(), 3u);
}

TEST(AtomicFile, ErrorsNameTheFileAndTheReason) {
  Folder f;
  try {
    AtomicFile a(f.file("missing/out.txt"));
    FAIL() << "created in a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out.txt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

TEST(AtomicFile, SigtermRemovesTheTemporaryFile) {
  Folder f;
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    AtomicFile a(f.file("out.db"), AtomicFile::Kind::kSqlite);
    a.write("partial");
    std::ofstream(a.temp_path() + "-journal") << "j";
    (void)!::write(pipefd[1], "r", 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(::read(pipefd[0], &c, 1), 1);
  EXPECT_EQ(f.entries(), 2u);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_EQ(f.entries(), 0u);
}

TEST(CheckOutputs, InputsAreNeverReplaced) {
  Folder f;
  std::ofstream(f.file("in.db")) << "x";
  fs::create_symlink(f.file("in.db"), f.file("alias.db"));
  auto fails = [&](const std::vector<std::string>& outs, const std::vector<std::string>& ins, const std::string& why) {
    try {
      check_outputs(outs, ins, true);
      ADD_FAILURE() << "accepted " << outs.front();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  fails({f.file("in.db")}, {f.file("in.db")}, "is an input");
  fails({f.file("alias.db")}, {f.file("in.db")}, "is an input");
  fails({f.path + "/../" + fs::path(f.path).filename().string() + "/in.db"}, {f.file("in.db")}, "is an input");
  fails({f.file("new.json"), f.file("./new.json")}, {}, "named for two outputs");
  fails({"-", "-"}, {}, "only one output can go to stdout");
  fails({f.path}, {}, "is a directory");
  EXPECT_NO_THROW(check_outputs({f.file("new.json"), "-", ""}, {f.file("in.db")}, false));
  EXPECT_THROW(check_outputs({f.file("alias.db")}, {}, false), Error);
  fs::create_symlink(f.file("missing.db"), f.file("dangling.db"));
  try {
    check_outputs({f.file("dangling.db")}, {}, false);
    ADD_FAILURE() << "a dangling symlink counted as free";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscope
