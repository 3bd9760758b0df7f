// Where libcupti is found. The collector and `gpuscope doctor` both search
// through here, so doctor names the library a recording would use.
// No CUDA headers: the CLI builds this without the CUDA toolkit.
#pragma once

namespace gpuscope::collector {

// One already in the process first, then GPUSCOPE_CUPTI, the library path and
// the CUDA install. A handle from dlopen, or null when none loads.
void* open_cupti();

}  // namespace gpuscope::collector
