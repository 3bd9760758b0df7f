#include "cli/live_recording.h"

#include <cstdio>

#include "trace_formats/common/text.h"
#include "trace_formats/store/live.h"

namespace gpuscope::cli {

bool handle_live_recording(const std::string& path, bool wait) {
  const auto writer = store::live_writer(path);
  if (!writer) return false;
  const std::string name = terminal_safe(path);
  if (!wait) {
    std::fprintf(stderr,
                 "gpuscope: note: %s is still being recorded (%s): this covers what was written so far; --wait waits "
                 "until the job ends\n",
                 name.c_str(), writer->c_str());
    return true;
  }
  std::fprintf(stderr, "gpuscope: waiting for %s to be finished (%s)...\n", name.c_str(), writer->c_str());
  store::wait_until_written(path);
  return false;
}

}  // namespace gpuscope::cli
