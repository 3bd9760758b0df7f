// The collector's host table, set once by gpuscope_plugin_init before any
// callback is registered and never changed after.
#pragma once

#include "gpuscope/plugin.h"

namespace gpuscope::torch_plugin {

const gpuscope_host_api* host();
void set_host(const gpuscope_host_api* host);

}  // namespace gpuscope::torch_plugin
