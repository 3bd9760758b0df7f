// The recordings given to `gpuscope merge`: opened, described (host, ranks,
// job key, when they were recorded) and checked to be the nodes of one job.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace_formats/store/reader.h"

namespace gpuscope::merge {

struct InputProcess {
  int64_t pid = 0;
  int64_t rank = -1;  // -1: RANK unset
  int64_t world_size = -1;
  std::string host;
};

struct Input {
  std::string path;
  std::unique_ptr<store::Reader> reader;
  std::string host;     // meta host
  std::string job_key;  // meta job_key, empty when the recording has none
  std::vector<InputProcess> processes;
  // Wall-clock span of its processes (ns since the Unix epoch), 0 when unknown.
  int64_t utc_first = 0, utc_last = 0;

  std::vector<int64_t> ranks() const;
  std::string describe() const;  // "node1.db (host b, ranks 2-3)"
};

// Opens each path as a recording (Error "<path>: not a gpuscope recording..."
// otherwise) and reads what identifies it.
Input open_input(const std::string& path);

// Refuses, with one line naming the file, the same file twice, a file without a
// ranked process, and files of different jobs: another job key, another world
// size, a rank two files hold, or recorded at another time (wall clocks more
// than `kSameTimeSlackNs` apart).
inline constexpr int64_t kSameTimeSlackNs = int64_t{60} * 1'000'000'000;
void check_same_job(const std::vector<Input>& inputs);

}  // namespace gpuscope::merge
