// Loads in-process plugins (plugins/include/gpuscope/plugin.h) once the
// library they extend is in the process, and gives them the host API.
#pragma once

namespace gpuscope::collector {

// Loads every plugin whose target library is now loaded and that is not loaded
// yet. Cheap when nothing changed; called after each dlopen and at start-up.
void load_plugins_if_ready();
// From the library constructor: polls for target libraries in processes that
// may load them (Python, or programs linked against them).
void start_plugin_watcher();
// At exit, while the collector still records: each loaded plugin writes what
// it holds back (the torch plugin the step of the last backward pass). Its own
// atexit handler comes too late in a Python job, whose exit hook has ended the
// recording by then.
void shutdown_plugins();

}  // namespace gpuscope::collector
