// Exporters from a gpuscope database to the formats other viewers open:
// Chrome trace JSON in torch.profiler's dialect, Perfetto protobuf, and the
// TensorBoard PyTorch-profiler log directory. All stream rows from SQLite and
// write through a temporary file renamed at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_formats/store/reader.h"

namespace gpuscope::formats {

struct ExportOptions {
  bool force = false;
  bool progress = false;
  std::optional<int64_t> only_pid;  // one process only
  // Perfetto: rows sorted in memory (64 bytes each) up to this many; more
  // are sorted by SQLite, slower but in flat memory.
  uint64_t perfetto_rows_in_memory = 4'000'000;
  // A step as analyze bounds it: from the CPU's start (or the previous step's
  // end, if later) until the GPU work it launched ended.
  struct Step {
    int64_t number = 0, start = 0, end = 0;
  };
  // Only rows inside this time window (ns since origin), with an instant at its
  // start named "gpuscope: <note>" (`export --steps analysed`: the analysed steps).
  struct Window {
    int64_t start = 0, end = 0;
    std::string note;
    // The steps as analyze bounds them (GPU work included), for process `pid`:
    // its ProfilerStep#N ranges in the Chrome export and its "step N" slices
    // in the Perfetto export instead of the step table's (export_window.h,
    // replaced_steps).
    using Step = ExportOptions::Step;
    int64_t pid = 0;
    std::vector<Step> steps;
  };
  std::optional<Window> window;
  // Without a window (`export --steps all`): analyze's steps of process `pid`
  // for a recording that has none of its own (no step rows, no ProfilerStep
  // ranges: a job recorded without the torch plugin), written as its steps.
  struct Steps {
    int64_t pid = 0;
    std::vector<Step> steps;
  };
  std::optional<Steps> steps_where_none;
};

class OutputFile;

struct ExportStats {
  uint64_t events = 0;       // trace events written (Chrome: JSON events; Perfetto: slices, instants, counter values)
  uint64_t bytes = 0;        // bytes in the file (compressed size for .gz)
  uint64_t raw_bytes = 0;    // bytes before compression
  double seconds = 0;
  std::vector<std::string> files;

  // Commits `out` (renames it into place) and counts it with its `events`.
  void commit(OutputFile& out, uint64_t file_events);
};

// Chrome Trace Event JSON (".gz" suffix: gzip). Opens in chrome://tracing and
// Perfetto UI; Holistic Trace Analysis and TensorBoard read it as torch.profiler output.
ExportStats export_chrome(store::Reader& db, const std::string& path, const ExportOptions& opt);

// Perfetto's native protobuf trace (perfetto.protos.Trace).
ExportStats export_perfetto(store::Reader& db, const std::string& path, const ExportOptions& opt);

// LOGDIR/<run>/<host>_<pid>.<ms>.pt.trace.json.gz, one file per process.
ExportStats export_tensorboard(store::Reader& db, const std::string& logdir, const std::string& run,
                               const ExportOptions& opt);

}  // namespace gpuscope::formats
