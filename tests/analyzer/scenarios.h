// Synthetic training recordings with one bottleneck planted (or not), written
// with the simulator. Each rule has a scenario named after its id; "healthy"
// has none; a few more exercise steps, names and bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuscope::testing {

// Rule ids with a planted scenario; each also has a must-not-fire variant.
std::vector<std::string> planted_scenarios();

// Writes scenario `name` to `path` (replacing it). planted=false writes the
// same loop with the bottleneck removed. Extra names: "healthy", "odd_names",
// "nvtx_steps", "graph_replay", "graph_steps", "no_steps", "no_gpu", "two_devices",
// "nccl-overlap" (two GPU ranks whose NCCL kernels compute overlaps 50 % and 100 %).
void write_scenario(const std::string& name, bool planted, const std::string& path);

// A distributed job of extra_data_ns.size() ranks over gloo on the CPU, in
// lockstep; rank r's DataLoader takes extra_data_ns[r] longer per step. The
// scenarios "straggler" (rank 2 +20 ms), "collective-wait" (ranks 2 and 3
// +20 ms) and "ranks" (even) are such jobs of four ranks.
void write_ranks_scenario(const std::vector<int64_t>& extra_data_ns, const std::string& path);
std::vector<std::string> cross_rank_scenarios();

// A fresh path under the test temp folder.
std::string temp_db(const std::string& stem);

}  // namespace gpuscope::testing
