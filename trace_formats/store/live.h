// Whether a recording is still being written: by `gpuscope record` (it holds
// an exclusive flock on the file from claiming the name until the job has
// ended and the file is finalized) or by the collector in a process started
// with LD_PRELOAD and GPUSCOPE_OUTPUT (its SQLite connection holds a lock on
// the -shm index of the file, WAL mode, until the process ends). Readers of
// a live file see what was flushed so far; analyze, export and info say so.
#pragma once

#include <optional>
#include <string>

namespace gpuscope::store {

// Who is writing `path` ("gpuscope record, pid 123" or "the collector in
// pid 456"), or nullopt when nobody is (or it cannot be told).
std::optional<std::string> live_writer(const std::string& path);

// Returns once live_writer(path) is empty, polling every `poll_ms`.
void wait_until_written(const std::string& path, int poll_ms = 200);

}  // namespace gpuscope::store
