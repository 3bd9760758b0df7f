// An output file written through AtomicFile (common/atomic_file.h): under a
// temporary name, renamed into place by commit(); destroyed uncommitted, or
// ended by SIGINT/SIGTERM, it leaves nothing behind. Names ending in
// ".gz" are gzip-compressed on the way out, on a thread of their own: zlib
// at level 1 takes longer than writing the JSON, so the two overlap (the CPU
// time stays the same; the wall time drops when a second core is free).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "trace_formats/common/atomic_file.h"

namespace gpuscope::formats {

class OutputFile {
 public:
  // Throws Error when `path` exists and !force, or cannot be created.
  OutputFile(std::string path, bool force);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::string_view data);
  // Flushes, closes and renames over `path`. Returns the bytes written (compressed size for .gz).
  uint64_t commit();

  const std::string& path() const { return path_; }
  bool gzip() const { return gzip_; }
  // Bytes handed to write() so far (before compression).
  uint64_t bytes_in() const { return bytes_in_; }

 private:
  void write_raw(const char* data, size_t n);
  void deflate_some(const char* data, size_t n, bool finish);
  void compress_loop();
  void stop_compressor();

  struct Z;
  std::string path_;
  std::unique_ptr<AtomicFile> file_;
  bool gzip_ = false;
  Z* z_ = nullptr;
  uint64_t bytes_in_ = 0, bytes_out_ = 0;
};

}  // namespace gpuscope::formats
