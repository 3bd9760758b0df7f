#include "trace_formats/export/output_file.h"

#include <zlib.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "trace_formats/common/error.h"
#include "trace_formats/export/exporters.h"

namespace gpuscope::formats {

struct OutputFile::Z {
  z_stream s{};
  std::vector<unsigned char> out = std::vector<unsigned char>(1 << 20);

  // Blocks handed from write() to the compressing thread. At most kQueued
  // wait, so memory stays at a few blocks whatever the producer's pace.
  static constexpr size_t kQueued = 4;
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::string> queue, spare;
  bool closing = false;
  std::string error;  // set by the thread; write() and commit() throw it
  std::thread thread;
};

OutputFile::OutputFile(std::string path, bool force) : path_(std::move(path)) {
  check_outputs({path_}, {}, force);
  file_ = std::make_unique<AtomicFile>(path_, AtomicFile::Kind::kPlain,
                                       force ? AtomicFile::Existing::kReplace : AtomicFile::Existing::kRefuse);
  gzip_ = path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0;
  if (gzip_) {
    z_ = new Z;
    // Level 1: traces compress ~10x even so, and export stays I/O-speed.
    if (deflateInit2(&z_->s, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      delete z_;
      z_ = nullptr;
      throw Error(path_ + ": zlib deflateInit2 failed");
    }
    try {
      z_->thread = std::thread([this] { compress_loop(); });
    } catch (const std::system_error& e) {
      deflateEnd(&z_->s);
      delete z_;
      z_ = nullptr;
      throw Error(path_ + ": cannot start the compressing thread: " + e.what());
    }
  }
}

void OutputFile::compress_loop() {
  std::unique_lock<std::mutex> lock(z_->mu);
  for (;;) {
    z_->changed.wait(lock, [&] { return !z_->queue.empty() || z_->closing; });
    if (z_->queue.empty()) return;
    std::string block = std::move(z_->queue.front());
    z_->queue.pop_front();
    z_->changed.notify_all();
    lock.unlock();
    std::string error;
    try {
      deflate_some(block.data(), block.size(), false);
    } catch (const Error& e) {
      error = e.what();
    }
    lock.lock();
    block.clear();
    z_->spare.push_back(std::move(block));
    if (!error.empty()) {
      z_->error = error;
      z_->queue.clear();
      z_->changed.notify_all();
      return;
    }
  }
}

void OutputFile::stop_compressor() {
  if (!z_ || !z_->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(z_->mu);
    z_->closing = true;
  }
  z_->changed.notify_all();
  z_->thread.join();
}

OutputFile::~OutputFile() {
  if (z_) {
    // Uncommitted: what is still queued is not wanted.
    {
      std::lock_guard<std::mutex> lock(z_->mu);
      z_->queue.clear();
    }
    stop_compressor();
    deflateEnd(&z_->s);
    delete z_;
  }
  // file_'s destructor removes the temporary file unless committed.
}

void OutputFile::write_raw(const char* data, size_t n) {
  file_->write(std::string_view(data, n));
  bytes_out_ += n;
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
    std::unique_lock<std::mutex> lock(z_->mu);
    // zlib takes uInt lengths; queue large buffers in slices.
    while (!data.empty()) {
      z_->changed.wait(lock, [&] { return z_->queue.size() < Z::kQueued || !z_->error.empty(); });
      if (!z_->error.empty()) throw Error(z_->error);
      size_t k = std::min<size_t>(data.size(), 1u << 30);
      std::string block;
      if (!z_->spare.empty()) {
        block = std::move(z_->spare.front());
        z_->spare.pop_front();
      }
      block.assign(data.data(), k);
      z_->queue.push_back(std::move(block));
      z_->changed.notify_all();
      data.remove_prefix(k);
    }
  } else {
    write_raw(data.data(), data.size());
  }
}

uint64_t OutputFile::commit() {
  if (gzip_) {
    stop_compressor();  // after it has compressed everything queued
    if (!z_->error.empty()) throw Error(z_->error);
    deflate_some(nullptr, 0, true);
  }
  file_->commit();
  return bytes_out_;
}

void ExportStats::commit(OutputFile& out, uint64_t file_events) {
  events += file_events;
  raw_bytes += out.bytes_in();
  bytes += out.commit();
  files.push_back(out.path());
}

}  // namespace gpuscope::formats
