// Where libcupti is found. The collector and `gpuscope doctor` both search
// through here, so doctor names the library a recording would use.
// No CUDA headers: the CLI builds this without the CUDA toolkit.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::collector {

// What the search looks at, gathered from the process (or faked by tests).
struct CuptiSearch {
  std::string env_path;                 // GPUSCOPE_CUPTI
  std::vector<std::string> loaded;      // paths of the shared objects in the process
  std::vector<std::string> extra_dirs;  // folders the caller knows of (doctor: the Python's nvidia/*/lib)
  std::string conda_prefix;             // CONDA_PREFIX
  std::vector<std::string> cuda_roots;  // /usr/local/cuda, then /usr/local/cuda-* newest first
};

// The libraries to try, in order: GPUSCOPE_CUPTI; the CUDA the job already
// loaded (a pip wheel's nvidia/*/lib folders, or libcupti beside its libcudart,
// or the CUDA root above it); the caller's folders; conda; the bare sonames
// (LD_LIBRARY_PATH, ld.so.cache); the CUDA installs. Full paths or sonames.
std::vector<std::string> cupti_candidates(const CuptiSearch& s);

// The paths of the shared objects loaded in this process (dl_iterate_phdr),
// absolute ones only.
std::vector<std::string> loaded_libraries();

// The search of this process: its loaded objects, environment and /usr/local.
CuptiSearch this_process_search(std::vector<std::string> extra_dirs = {});

// One already in the process first, then cupti_candidates(this_process_search()).
// A handle from dlopen, or null when none loads.
void* open_cupti(const std::vector<std::string>& extra_dirs = {});

}  // namespace gpuscope::collector
