// The collector's host table, set once by gpuscope_plugin_init before any
// callback is registered and never changed after.
#pragma once

#include "gpuscope/plugin.h"

namespace gpuscope::torch_plugin {

namespace detail {
extern const gpuscope_host_api* g_host;
}

// Inline: every callback asks for it, and a call per op was measurable.
inline const gpuscope_host_api* host() { return detail::g_host; }
void set_host(const gpuscope_host_api* host);

}  // namespace gpuscope::torch_plugin
