#include "collector/cupti_locate.h"

#include <dlfcn.h>

#include <string>

#include "common/settings.h"

namespace gpuscope::collector {

void* open_cupti() {
  const char* names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_NOLOAD)) return h;
  if (const char* env = settings::raw(settings::Id::kCupti))
    if (void* h = dlopen(env, RTLD_NOW)) return h;
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW)) return h;
  const char* dirs[] = {"/usr/local/cuda/extras/CUPTI/lib64/", "/usr/local/cuda/lib64/",
                        "/usr/local/cuda/targets/x86_64-linux/lib/",
                        "/usr/local/cuda-13.0/targets/x86_64-linux/lib/"};
  for (const char* d : dirs)
    for (const char* n : names)
      if (void* h = dlopen((std::string(d) + n).c_str(), RTLD_NOW)) return h;
  return nullptr;
}

}  // namespace gpuscope::collector
