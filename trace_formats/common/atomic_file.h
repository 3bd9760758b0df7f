// The one way offline tools write an output file: a temporary file created
// next to the target under a random name with O_CREAT|O_EXCL|O_NOFOLLOW (a
// symlink planted there is never followed), renamed over the target on
// commit, and removed on every other exit path: exceptions, destruction, and
// SIGINT/SIGTERM/SIGHUP (a handler unlinks every registered temporary file,
// then the signal ends the process as it would have). Without kReplace the
// finished file is linked into place by a call that fails when the name exists
// (renameat2 RENAME_NOREPLACE, else link), so of two writers racing for one
// name exactly one wins, and a file or symlink (dangling too) created there
// meanwhile is never replaced.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuscope {

class AtomicFile {
 public:
  enum class Kind { kPlain, kSqlite };  // kSqlite: also removes -journal, -wal and -shm
  enum class Existing { kRefuse, kReplace };  // kReplace: --force
  // Throws Error naming `target` (with the OS reason) when no temporary file
  // can be created in its folder.
  explicit AtomicFile(std::string target, Kind kind = Kind::kPlain, Existing existing = Existing::kRefuse);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& target() const { return target_; }
  const std::string& temp_path() const { return temp_; }
  int fd() const { return fd_; }

  // Writes all of `data`; throws Error naming the target with the OS reason.
  void write(std::string_view data);
  // Closes the descriptor (for writers that reopen the file by name, as SQLite does).
  void close();
  // Closes and moves the file to the target: over it with kReplace, else only
  // where no name exists ("<target>: already exists; use --force to
  // overwrite"). Throws Error with the OS reason.
  void commit();

 private:
  std::string target_, temp_;
  Kind kind_;
  Existing existing_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

// Writes a whole text file through AtomicFile. Throws Error naming `path`.
void write_file_atomically(const std::string& path, const std::string& text, bool force);

// The error for an output that exists without --force, one wording everywhere.
std::string exists_message(const std::string& path);

// Refuses, before anything is written, with one line naming the file: an
// existing output without `force` (a symlink exists, dangling or not), an
// output that is a directory, an output that is one of `inputs` (same path or
// same file, st_dev and st_ino; also with `force`), and two outputs naming the
// same file. Empty names and "-" (stdout) are skipped, but "-" may be named
// only once. A name taken after this check is refused by AtomicFile::commit.
void check_outputs(const std::vector<std::string>& outputs, const std::vector<std::string>& inputs, bool force);

// Registers a path to be unlinked if SIGINT, SIGTERM or SIGHUP ends the
// process (installs the handlers once, where the signal's action is the
// default). Returns a slot for unregister_temp_path, or -1 when all are taken.
int register_temp_path(const std::string& path, bool sqlite_side_files);
void unregister_temp_path(int slot);
void unregister_temp_path(const std::string& path);

}  // namespace gpuscope
