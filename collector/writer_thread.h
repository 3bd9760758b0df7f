// The one thread that touches SQLite: every ~100 ms it asks CUPTI for filled
// buffers, drains the per-thread rings, samples NVML, and commits.
#pragma once

#include <vector>

#include "collector/config.h"
#include "trace_formats/store/rows.h"

namespace gpuscope::collector::writer_thread {

// first_tick runs on the writer thread after its first commit. Once stop()
// has returned true, start() may run again (one file per capture on demand).
void start(const Config& config, void (*first_tick)());
// Device rows the next writer puts into its file when it opens it (a capture
// on demand: collector/device_query.h).
void set_devices_at_open(std::vector<store::DeviceRow> rows);
// A writer runs and has not finished.
bool running();
// Waits until the writer started last has opened its file: false when it
// could not (it said why on stderr) or took longer than timeout_ms.
bool wait_open(int timeout_ms);
// Final drain and close; returns true once the database is complete, false when
// the writer did not finish within timeout_ms (it is then left behind). Idempotent.
bool stop(int timeout_ms);
// Has the writer decode every buffer CUPTI has handed over, and waits up to
// timeout_ms for it; false when it did not (or no writer runs). Before
// cuptiFinalize: the records point at names CUPTI frees then.
bool decode_cupti_now(int timeout_ms);
// Async-signal-safe: asks the writer to finish and waits up to timeout_ms.
void stop_from_signal(int timeout_ms);

}  // namespace gpuscope::collector::writer_thread
