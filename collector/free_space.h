// When to stop recording because the recording's file system is filling up:
// below GPUSCOPE_MIN_FREE_MB, or, at the rate free space fell since the last
// check, within kHorizonNs of it. A disk that fills in under a second (a job
// writing a checkpoint beside a recording that writes fast) is then caught
// before SQLite fails with "database or disk is full", which leaves no room to
// say why the file ends early.
#pragma once

#include <cstdint>

namespace gpuscope::collector {

class FreeSpaceGuard {
 public:
  static constexpr uint64_t kHorizonNs = 1'000'000'000;

  explicit FreeSpaceGuard(uint64_t floor_bytes) : floor_(floor_bytes) {}

  // `free` bytes seen at `now_ns`; true when recording should stop.
  bool low(uint64_t free, uint64_t now_ns) {
    if (floor_ == 0) return false;
    uint64_t margin = 0;
    if (seen_ && free < last_free_ && now_ns > last_ns_) {
      const double per_ns = static_cast<double>(last_free_ - free) / static_cast<double>(now_ns - last_ns_);
      margin = static_cast<uint64_t>(per_ns * static_cast<double>(kHorizonNs));
    }
    seen_ = true;
    last_free_ = free;
    last_ns_ = now_ns;
    return free < floor_ || free - floor_ < margin;
  }

 private:
  uint64_t floor_;
  bool seen_ = false;
  uint64_t last_free_ = 0;
  uint64_t last_ns_ = 0;
};

}  // namespace gpuscope::collector
