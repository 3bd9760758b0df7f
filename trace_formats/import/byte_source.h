// Sequential byte input for importers: a file or a memory block, transparently
// gunzipped when it starts with the gzip magic bytes (never judged by the name).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gpuscope::formats {

class ByteSource {
 public:
  // Opens a file. Throws Error("<path>: ...") when it is missing, not a regular
  // file or empty.
  static std::unique_ptr<ByteSource> open_file(const std::string& path);
  // Reads from memory that outlives the source; `name` is used in errors.
  static std::unique_ptr<ByteSource> from_memory(std::string_view data, std::string name);

  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Fills up to n bytes; returns 0 only at the end of the data. Throws Error
  // naming the input for unreadable, corrupt or truncated gzip data.
  size_t read(char* dst, size_t n);

  const std::string& name() const { return name_; }
  bool gzipped() const { return gz_ != nullptr; }
  // Bytes consumed from the underlying input and its total size, for progress.
  uint64_t raw_position() const { return raw_pos_; }
  uint64_t raw_size() const { return raw_size_; }

 private:
  struct Raw;
  struct Gz;
  ByteSource(std::string name, uint64_t size, std::unique_ptr<Raw> raw);
  size_t read_raw(char* dst, size_t n);
  size_t read_gz(char* dst, size_t n);

  std::string name_;
  uint64_t raw_pos_ = 0, raw_size_ = 0;
  std::unique_ptr<Raw> raw_;
  std::unique_ptr<Gz> gz_;
  // Raw bytes read while sniffing the format, handed out before the rest.
  std::string sniffed_;
  size_t sniffed_pos_ = 0;
};

}  // namespace gpuscope::formats
