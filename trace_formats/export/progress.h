// One self-overwriting progress line on stderr for long imports and exports,
// shown only when stderr is a terminal (never in logs or pipes).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "trace_formats/common/text.h"

namespace gpuscope::formats {

class Progress {
 public:
  // `label` may quote a file name: its control bytes are escaped.
  Progress(const std::string& label, bool enabled)
      : label_(terminal_safe(label)), enabled_(enabled && ::isatty(2)), start_(Clock::now()), last_(start_) {}
  ~Progress() { done(); }

  // done/total in `unit`s; total 0 means unknown. Throttled to ~5 updates a second.
  void update(uint64_t done, uint64_t total, const char* unit, uint64_t events) {
    if (!enabled_) return;
    auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    char line[256];
    if (total > 0)
      std::snprintf(line, sizeof line, "\r%s: %.*f of %.*f %s (%.0f%%), %.2f M events, %.1f s", label_.c_str(),
                    unit[0] == 'B' ? 1 : 0, scaled(done, unit), unit[0] == 'B' ? 1 : 0, scaled(total, unit),
                    unit_name(unit), 100.0 * double(done) / double(total), double(events) / 1e6, secs);
    else
      std::snprintf(line, sizeof line, "\r%s: %.2f M events, %.1f s", label_.c_str(), double(events) / 1e6, secs);
    std::fputs(line, stderr);
    std::fflush(stderr);
    shown_ = true;
  }

  // A named stage after the counted part (an import's finishing queries and
  // commit), shown at once and unthrottled: the line never goes quiet before done().
  void stage(const char* what) {
    if (!enabled_) return;
    double secs = std::chrono::duration<double>(Clock::now() - start_).count();
    std::fprintf(stderr, "\r%s: %s, %.1f s\033[K", label_.c_str(), what, secs);
    std::fflush(stderr);
    shown_ = true;
  }

  void done() {
    if (shown_) {
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
      shown_ = false;
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double scaled(uint64_t v, const char* unit) {
    return unit[0] == 'B' ? double(v) / 1e6 : double(v);
  }
  static const char* unit_name(const char* unit) { return unit[0] == 'B' ? "MB" : unit; }

  std::string label_;
  bool enabled_;
  bool shown_ = false;
  Clock::time_point start_, last_;
};

}  // namespace gpuscope::formats
