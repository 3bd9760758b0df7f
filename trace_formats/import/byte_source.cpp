#include "trace_formats/import/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "trace_formats/common/error.h"

namespace gpuscope::formats {

struct ByteSource::Raw {
  int fd = -1;
  std::string_view memory;
  size_t memory_pos = 0;
  ~Raw() {
    if (fd >= 0) ::close(fd);
  }
};

struct ByteSource::Gz {
  z_stream z{};
  std::vector<char> in = std::vector<char>(1 << 18);
  bool stream_end = false;  // the current member ended
  bool input_eof = false;
  Gz() {
    // 16 + MAX_WBITS: gzip wrapper only; concatenated members are handled in read_gz.
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw Error("zlib: inflateInit2 failed");
  }
  ~Gz() { inflateEnd(&z); }
};

ByteSource::ByteSource(std::string name, uint64_t size, std::unique_ptr<Raw> raw)
    : name_(std::move(name)), raw_size_(size), raw_(std::move(raw)) {
  // Sniff the first two bytes for the gzip magic.
  char head[2];
  size_t got = 0;
  while (got < 2) {
    size_t n = read_raw(head + got, 2 - got);
    if (n == 0) break;
    got += n;
  }
  sniffed_.assign(head, got);
  if (got == 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    gz_ = std::make_unique<Gz>();
}

ByteSource::~ByteSource() = default;

std::unique_ptr<ByteSource> ByteSource::open_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": no such file");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": not a regular file");
  if (st.st_size == 0) throw Error(path + ": empty file (0 bytes), not a trace");
  auto raw = std::make_unique<Raw>();
  raw->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw->fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(raw->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  return std::unique_ptr<ByteSource>(
      new ByteSource(path, static_cast<uint64_t>(st.st_size), std::move(raw)));
}

std::unique_ptr<ByteSource> ByteSource::from_memory(std::string_view data, std::string name) {
  auto raw = std::make_unique<Raw>();
  raw->memory = data;
  return std::unique_ptr<ByteSource>(new ByteSource(std::move(name), data.size(), std::move(raw)));
}

size_t ByteSource::read_raw(char* dst, size_t n) {
  if (sniffed_pos_ < sniffed_.size()) {
    size_t k = std::min(n, sniffed_.size() - sniffed_pos_);
    std::memcpy(dst, sniffed_.data() + sniffed_pos_, k);
    sniffed_pos_ += k;
    return k;
  }
  size_t got = 0;
  if (raw_->fd >= 0) {
    for (;;) {
      ssize_t r = ::read(raw_->fd, dst, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(name_ + ": read error: " + std::strerror(errno));
      got = static_cast<size_t>(r);
      break;
    }
  } else {
    got = std::min(n, raw_->memory.size() - raw_->memory_pos);
    std::memcpy(dst, raw_->memory.data() + raw_->memory_pos, got);
    raw_->memory_pos += got;
  }
  raw_pos_ += got;
  return got;
}

size_t ByteSource::read(char* dst, size_t n) {
  if (n == 0) return 0;
  return gz_ ? read_gz(dst, n) : read_raw(dst, n);
}

size_t ByteSource::read_gz(char* dst, size_t n) {
  Gz& g = *gz_;
  g.z.next_out = reinterpret_cast<Bytef*>(dst);
  g.z.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
  while (g.z.avail_out > 0) {
    if (g.z.avail_in == 0 && !g.input_eof) {
      size_t r = read_raw(g.in.data(), g.in.size());
      if (r == 0) {
        g.input_eof = true;
      } else {
        g.z.next_in = reinterpret_cast<Bytef*>(g.in.data());
        g.z.avail_in = static_cast<uInt>(r);
      }
    }
    if (g.stream_end) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes); anything else is an error.
      if (g.z.avail_in == 0) {
        if (g.input_eof) break;
        continue;
      }
      if (g.z.avail_in >= 1 && g.z.next_in[0] != 0x1f)
        throw Error(name_ + ": trailing garbage after the gzip data");
      inflateReset(&g.z);
      g.stream_end = false;
    }
    if (g.z.avail_in == 0 && g.input_eof)
      throw Error(name_ + ": truncated gzip data (the file ends inside the compressed stream)");
    int rc = inflate(&g.z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      g.stream_end = true;
    } else if (rc == Z_BUF_ERROR) {
      // No progress possible without more input; the loop reads more or reports truncation.
      if (g.z.avail_in != 0) throw Error(name_ + ": corrupt gzip data");
    } else if (rc != Z_OK) {
      throw Error(name_ + ": corrupt gzip data (" + (g.z.msg ? g.z.msg : "inflate failed") + ")");
    }
    // Return what we have as soon as something was produced and input would block.
    if (g.z.avail_out < n && g.z.avail_in == 0) break;
  }
  return n - g.z.avail_out;
}

}  // namespace gpuscope::formats
