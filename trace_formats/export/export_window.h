// `gpuscope export --steps analysed`: the exports hold only the rows of a time
// window (the analysed steps), and every export marks what gpuscope did not
// trace, so that consumers measuring from the first to the last event (HTA's
// idle time, TensorBoard's GPU utilization) describe what `analyze` describes
// and an untraced stretch is not read as an idle GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_formats/export/exporters.h"
#include "trace_formats/store/reader.h"

namespace gpuscope::formats {

// While alive, the event tables of `reader` read as their rows inside the
// window (ExportOptions::window): a TEMP view per table shadows the table of
// the same name (SQLite looks names up in temp first), so every exporter query
// is windowed without knowing it. Nothing happens without a window.
class WindowedTables {
 public:
  WindowedTables(store::Reader& reader, const ExportOptions& opt);
  ~WindowedTables();
  WindowedTables(const WindowedTables&) = delete;
  WindowedTables& operator=(const WindowedTables&) = delete;

 private:
  store::Reader& r_;
  std::vector<std::string> views_;
};

// The steps an export writes for one process instead of its recorded ones:
// with a window, the analysed process's analysed steps (unless it recorded
// ProfilerStep#N ranges, which are written as recorded); without one,
// ExportOptions::steps_where_none for a process that recorded no steps.
// The Chrome export writes them as ProfilerStep#N events, the Perfetto export
// as "step N" slices, so that both show the steps analyze uses. nullopt:
// every process keeps its recorded steps. Call it under WindowedTables.
std::optional<ExportOptions::Steps> replaced_steps(store::Reader& reader, const ExportOptions& opt);

// What gpuscope writes on its own "gpuscope" row: the stretches it did not
// trace (between the traced stretches of a sampled or control-stretch
// recording, within the window when there is one) and, with a window, an
// instant at its start naming it. start == end for the instant.
struct GpuscopeMark {
  int64_t start = 0, end = 0;
  std::string name;
};
std::vector<GpuscopeMark> gpuscope_marks(store::Reader& reader, const ExportOptions& opt);

}  // namespace gpuscope::formats
