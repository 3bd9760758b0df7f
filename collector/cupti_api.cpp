#include "collector/cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>

namespace gpuscope::collector {
namespace {

void* open_cupti() {
  const char* names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_NOLOAD)) return h;
  if (const char* env = std::getenv("GPUSCOPE_CUPTI"))
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

template <class F>
bool resolve(void* lib, const char* name, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) why = std::string("libcupti lacks ") + name;
  return out != nullptr;
}

}  // namespace

bool load_cupti(CuptiApi& api, std::string& why) {
  void* lib = open_cupti();
  if (!lib) {
    why = "libcupti not found (set GPUSCOPE_CUPTI to its path)";
    return false;
  }
  return resolve(lib, "cuptiActivityEnable", api.activity_enable, why) &&
         resolve(lib, "cuptiActivityDisable", api.activity_disable, why) &&
         resolve(lib, "cuptiActivityRegisterCallbacks", api.register_callbacks, why) &&
         resolve(lib, "cuptiActivityFlushAll", api.flush_all, why) &&
         resolve(lib, "cuptiActivityGetNextRecord", api.get_next_record, why) &&
         resolve(lib, "cuptiActivityGetNumDroppedRecords", api.get_num_dropped, why) &&
         resolve(lib, "cuptiGetCallbackName", api.get_callback_name, why) &&
         resolve(lib, "cuptiActivityEnableRuntimeApi", api.enable_runtime_api, why) &&
         resolve(lib, "cuptiActivityEnableDriverApi", api.enable_driver_api, why) &&
         resolve(lib, "cuptiSubscribe", api.subscribe, why) &&
         resolve(lib, "cuptiUnsubscribe", api.unsubscribe, why) &&
         resolve(lib, "cuptiGetResultString", api.get_result_string, why) &&
         resolve(lib, "cuptiActivityRegisterTimestampCallback", api.register_timestamp_callback, why) &&
         resolve(lib, "cuptiActivitySetAttribute", api.set_attribute, why) &&
         resolve(lib, "cuptiActivityPushExternalCorrelationId", api.push_external_id, why) &&
         resolve(lib, "cuptiActivityPopExternalCorrelationId", api.pop_external_id, why) &&
         resolve(lib, "cuptiGetVersion", api.get_version, why) &&
         resolve(lib, "cuptiSetThreadIdType", api.set_thread_id_type, why) &&
         (api.finalize = reinterpret_cast<decltype(api.finalize)>(dlsym(lib, "cuptiFinalize")), true);
}

std::string cupti_error(const CuptiApi& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.get_result_string && api.get_result_string(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

}  // namespace gpuscope::collector
