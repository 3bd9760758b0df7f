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

}  // namespace gpuscope::collector
