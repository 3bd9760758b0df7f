// What `gpuscope info` shows about a recording, read in one pass: where it
// came from, its time span, how much of the job was traced, devices,
// processes, row counts, drops and the collector's messages. Values are as
// stored (not escaped for a terminal); the caller formats them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_formats/store/job_end.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::store {

struct RecordingSummary {
  int schema_version = 0;
  std::string gpuscope_version;  // meta gpuscope_version, "?" when missing
  std::string source;            // meta source, "gpuscope record" when missing
  // First start and last end over every timed table; none without timed rows.
  struct Span {
    int64_t start = 0, end = 0;
  };
  std::optional<Span> span;
  // Sampled or windowed recordings: the `sampling_window` ranges.
  struct Traced {
    int64_t stretches = 0, ns = 0;
    std::string sample;        // meta sample (--sample ON,OFF), "" when missing
    int64_t cupti_teardowns = 0;  // collector_stat cupti_finalizes
    int64_t cupti_teardowns_failed = 0;  // collector_stat cupti_teardown_failures
    int64_t closed_by_reader = 0; // stretches left open by a killed job, closed at its last event
  };
  std::optional<Traced> traced;
  std::optional<JobEnd> job;  // how the job ended (meta job_exit), recorded by `gpuscope record`
  struct Device {
    int64_t id = 0;
    std::string name;
    int64_t sm_count = 0, total_memory = 0, compute_major = 0, compute_minor = 0;
  };
  std::vector<Device> devices;  // by id
  struct Process {
    int64_t pid = 0;
    std::string host;
    std::optional<int64_t> rank, world_size;
    std::string cupti_status, cmdline;
  };
  std::vector<Process> processes;  // by pid
  struct Rows {
    std::string table;
    int64_t count = 0;
  };
  std::vector<Rows> rows;  // every table but meta and enum, in schema order
  int64_t dropped = 0;     // dropped_records
  struct Message {
    int64_t pid = 0;
    std::string text;
  };
  std::vector<Message> messages;  // by time
};

RecordingSummary summarize(Reader& recording);

// Records the collector had to drop (full rings, buffer pool exhausted): the
// sum of its `dropped*` statistics.
int64_t dropped_records(Connection& db);

}  // namespace gpuscope::store
