// The one thread that touches SQLite: every ~100 ms it asks CUPTI for filled
// buffers, drains the per-thread rings, samples NVML, and commits.
#pragma once

#include "collector/config.h"

namespace gpuscope::collector::writer_thread {

void start(const Config& config);
// Final flush and close; returns when the database is complete. Safe to call twice.
void stop();
// Async-signal-safe: asks the writer to finish and waits up to timeout_ms.
void stop_from_signal(int timeout_ms);

}  // namespace gpuscope::collector::writer_thread
