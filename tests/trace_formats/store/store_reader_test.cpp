// store::Reader on recordings left in WAL mode (issue 23): LD_PRELOAD
// recordings and SIGKILLed writers leave the file in WAL mode, with or
// without a -wal holding the last commits. Readers see everything, create no
// -wal/-shm next to the file, and read a file in a folder they cannot write.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "trace_formats/store/reader.h"

namespace gpuscope {
namespace {

namespace fs = std::filesystem;

struct Folder {
  Folder() {
    path = (fs::temp_directory_path() / ("store_reader_" + std::to_string(getpid()) + "_" + std::to_string(n++))).string();
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    fs::permissions(path, fs::perms::owner_all);
    fs::remove_all(path);
  }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string path;
  static inline int n = 0;
};

// A copy of a real recording switched to WAL mode and checkpointed; with
// `last_commit_in_wal`, a writer then commits one more meta row and is killed
// (no close, no checkpoint), so that row lives only in the -wal.
std::string wal_recording(const Folder& f, bool last_commit_in_wal) {
  const std::string db = f.path + "/run.db";
  fs::copy_file(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/nvtx_loop.db", db);
  const pid_t pid = fork();
  if (pid == 0) {
    sqlite3* c = nullptr;
    sqlite3_open(db.c_str(), &c);
    sqlite3_exec(c, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;", nullptr, nullptr, nullptr);
    if (!last_commit_in_wal) {
      sqlite3_close(c);  // the last connection: checkpoints and removes -wal and -shm
      _exit(0);
    }
    sqlite3_exec(c, "INSERT INTO meta(key, value) VALUES ('only_in_wal', 'yes')", nullptr, nullptr, nullptr);
    _exit(0);  // as SIGKILL would: -wal and -shm stay
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return db;
}

TEST(StoreReader, WalModeFileWithoutWalCreatesNothing) {
  Folder f;
  const std::string db = wal_recording(f, false);
  const auto before = f.listing();
  ASSERT_EQ(before, std::vector<std::string>{"run.db"});
  EXPECT_TRUE(store::plan_read_only(db, true).immutable);
  {
    store::Reader r(db);
    EXPECT_GT(r.count("range"), 0);
    store::Connection second(db, store::Connection::Mode::kReadOnly);  // as the analyzer's worker threads open it
    EXPECT_GT(second.query_int("SELECT count(*) FROM range").value_or(0), 0);
  }
  EXPECT_EQ(f.listing(), before);
}

TEST(StoreReader, TheWalOfAKilledWriterIsCheckpointedAndRemoved) {
  // Issue 50: `gpuscope record` killed with SIGKILL (its job with it) left
  // -wal and -shm beside the file for good. Nobody uses them: the first reader
  // that may write there checkpoints the -wal into the file, and both go.
  for (bool keep_shm : {true, false}) {
    SCOPED_TRACE(keep_shm ? "-wal and -shm" : "-wal alone");
    Folder f;
    const std::string db = wal_recording(f, true);
    if (!keep_shm) fs::remove(db + "-shm");
    ASSERT_TRUE(fs::file_size(db + "-wal") > 0);
    {
      store::Reader r(db);
      EXPECT_EQ(r.meta("only_in_wal"), "yes");
    }
    EXPECT_EQ(f.listing(), std::vector<std::string>{"run.db"});
    store::Reader again(db);  // the last commit is in the file now
    EXPECT_EQ(again.meta("only_in_wal"), "yes");
  }
}

TEST(StoreReader, TheWalOfALiveWriterIsLeftAlone) {
  // Must-not-fire: a writer still connected (the collector of a job started
  // with LD_PRELOAD) keeps its -wal and -shm; the reader sees its commits.
  Folder f;
  const std::string db = wal_recording(f, false);
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    sqlite3* c = nullptr;
    sqlite3_open(db.c_str(), &c);
    sqlite3_exec(c, "PRAGMA wal_autocheckpoint=0; INSERT INTO meta(key, value) VALUES ('only_in_wal', 'yes')",
                 nullptr, nullptr, nullptr);
    char byte = 1;
    (void)!write(ready[1], &byte, 1);
    (void)!read(done[0], &byte, 1);  // until the parent has read
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  {
    store::Reader r(db);
    EXPECT_EQ(r.meta("only_in_wal"), "yes");
  }
  EXPECT_EQ(f.listing(), (std::vector<std::string>{"run.db", "run.db-shm", "run.db-wal"}));
  (void)!write(done[1], &byte, 1);
  int status = 0;
  waitpid(pid, &status, 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

TEST(StoreReader, ReadOnlyFolderFallsBackToImmutable) {
  Folder f;
  const std::string db = wal_recording(f, true);
  fs::remove(db + "-shm");
  // SQLite cannot create the -shm it needs there: the file is read without it.
  const store::ReadOnlyPlan plan = store::plan_read_only(db, false);
  EXPECT_TRUE(plan.immutable);
  EXPECT_EQ(plan.unread_wal_bytes, static_cast<int64_t>(fs::file_size(db + "-wal")));
  const auto before = f.listing();
  {
    store::Connection c(db, store::Connection::Mode::kImmutable);
    store::check_schema_version(c);
    EXPECT_GT(c.query_int("SELECT count(*) FROM range").value_or(0), 0);
  }
  EXPECT_EQ(f.listing(), before);
  // For real where permissions apply (root ignores them).
  if (geteuid() == 0) GTEST_SKIP() << "running as root: the read-only folder itself is not checked";
  fs::permissions(f.path, fs::perms::owner_read | fs::perms::owner_exec);
  store::Reader r(db);
  EXPECT_GT(r.count("range"), 0);
  EXPECT_EQ(f.listing(), before);
}

TEST(StoreReader, UnusualPathsOpenImmutable) {
  Folder f;
  const std::string db = f.path + "/a ?#%&=b.db";
  fs::copy_file(wal_recording(f, false), db);
  store::Reader r(db);
  EXPECT_GT(r.count("range"), 0);
}

}  // namespace
}  // namespace gpuscope
