#include "export/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/error.h"

namespace gpuscope::formats {

struct OutputFile::Z {
  z_stream s{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 20);
};

OutputFile::OutputFile(std::string path, bool force) : path_(std::move(path)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path_, ec) && !force) throw Error(path_ + ": already exists (use --force to overwrite)");
  if (fs::is_directory(path_, ec)) throw Error(path_ + ": is a directory");
  fs::path p(path_);
  tmp_ = (p.parent_path() / ("." + p.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path_ + ": cannot create: " + std::strerror(errno));
  gzip_ = path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0;
  if (gzip_) {
    z_ = new Z;
    // Level 1: traces compress ~10x even so, and export stays I/O-speed.
    if (deflateInit2(&z_->s, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      delete z_;
      z_ = nullptr;
      ::close(fd_);
      ::unlink(tmp_.c_str());
      throw Error(path_ + ": zlib deflateInit2 failed");
    }
  }
}

OutputFile::~OutputFile() {
  if (z_) {
    deflateEnd(&z_->s);
    delete z_;
  }
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void OutputFile::write_raw(const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw Error(path_ + ": write failed: " + std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
    bytes_out_ += static_cast<uint64_t>(w);
  }
}

void OutputFile::deflate_some(const char* data, size_t n, bool finish) {
  z_->s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  z_->s.avail_in = static_cast<uInt>(n);
  for (;;) {
    z_->s.next_out = z_->out.data();
    z_->s.avail_out = static_cast<uInt>(z_->out.size());
    int rc = deflate(&z_->s, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) throw Error(path_ + ": gzip compression failed");
    write_raw(reinterpret_cast<const char*>(z_->out.data()), z_->out.size() - z_->s.avail_out);
    if (finish ? rc == Z_STREAM_END : (z_->s.avail_in == 0 && z_->s.avail_out != 0)) break;
  }
}

void OutputFile::write(std::string_view data) {
  bytes_in_ += data.size();
  if (gzip_) {
    // zlib takes uInt lengths; feed large buffers in slices.
    while (!data.empty()) {
      size_t k = std::min<size_t>(data.size(), 1u << 30);
      deflate_some(data.data(), k, false);
      data.remove_prefix(k);
    }
  } else {
    write_raw(data.data(), data.size());
  }
}

uint64_t OutputFile::commit() {
  if (gzip_) deflate_some(nullptr, 0, true);
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw Error(path_ + ": close failed: " + std::strerror(errno));
  }
  fd_ = -1;
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw Error(path_ + ": cannot rename into place: " + std::strerror(errno));
  committed_ = true;
  return bytes_out_;
}

}  // namespace gpuscope::formats
