// Synthetic training recordings with one bottleneck planted (or not), written
// with the simulator. Each rule has a scenario named after its id; "healthy"
// has none; a few more exercise steps, names and bad input.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::testing {

// Rule ids with a planted scenario; each also has a must-not-fire variant.
std::vector<std::string> planted_scenarios();

// Writes scenario `name` to `path` (replacing it). planted=false writes the
// same loop with the bottleneck removed. Extra names: "healthy", "odd_names",
// "nvtx_steps", "graph_replay", "no_steps", "no_gpu", "two_devices".
void write_scenario(const std::string& name, bool planted, const std::string& path);

// A fresh path under the test temp folder.
std::string temp_db(const std::string& stem);

}  // namespace gpuscope::testing
