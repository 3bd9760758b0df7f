#include "collector/cupti_api.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <set>
#include <string>

#include "collector/cupti_locate.h"

namespace gpuscope::collector {
namespace {

template <class F>
bool resolve(void* lib, const char* name, F& out, std::string& why) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) why = std::string("libcupti lacks ") + name;
  return out != nullptr;
}

// A libcuda entry point, or null. libcuda is in the process once CUPTI is.
void* libcuda() {
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return lib;
}

template <class F>
F cuda_fn(const char* name) {
  return libcuda() ? reinterpret_cast<F>(dlsym(libcuda(), name)) : nullptr;
}

// cuptiFinalize removes CUPTI's instrumentation from the process; a kernel
// still queued or running with it (a CUDA graph replayed ahead of the host,
// say) then fails with "unspecified launch failure". So every context the
// job uses is drained first.
bool synchronize_primary_contexts() {
  static const auto get_count = cuda_fn<CUresult (*)(int*)>("cuDeviceGetCount");
  static const auto get_device = cuda_fn<CUresult (*)(CUdevice*, int)>("cuDeviceGet");
  static const auto get_state = cuda_fn<CUresult (*)(CUdevice, unsigned*, int*)>("cuDevicePrimaryCtxGetState");
  static const auto retain = cuda_fn<CUresult (*)(CUcontext*, CUdevice)>("cuDevicePrimaryCtxRetain");
  static const auto release = cuda_fn<CUresult (*)(CUdevice)>("cuDevicePrimaryCtxRelease_v2");
  static const auto push = cuda_fn<CUresult (*)(CUcontext)>("cuCtxPushCurrent_v2");
  static const auto pop = cuda_fn<CUresult (*)(CUcontext*)>("cuCtxPopCurrent_v2");
  static const auto sync = cuda_fn<CUresult (*)()>("cuCtxSynchronize");
  if (!get_count || !get_device || !get_state || !retain || !release || !push || !pop || !sync) return false;
  int count = 0;
  if (get_count(&count) != CUDA_SUCCESS) return false;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    unsigned flags = 0;
    int active = 0;
    if (get_device(&dev, i) != CUDA_SUCCESS || get_state(dev, &flags, &active) != CUDA_SUCCESS) return false;
    if (!active) continue;
    CUcontext ctx = nullptr, popped = nullptr;
    if (retain(&ctx, dev) != CUDA_SUCCESS) return false;
    const bool pushed = push(ctx) == CUDA_SUCCESS;
    const bool ok = pushed && sync() == CUDA_SUCCESS;
    if (pushed) pop(&popped);
    release(dev);
    if (!ok) return false;
  }
  return true;
}

int cuda_driver_version() {
  static const int version = [] {
    const auto get = cuda_fn<CUresult (*)(int*)>("cuDriverGetVersion");
    int v = 0;
    return get && get(&v) == CUDA_SUCCESS ? v : 0;
  }();
  return version;
}

void cuda_call_here() {
  static const auto get_current = cuda_fn<CUresult (*)(CUcontext*)>("cuCtxGetCurrent");
  CUcontext ctx = nullptr;
  if (get_current) get_current(&ctx);
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
         (api.finalize = reinterpret_cast<decltype(api.finalize)>(dlsym(lib, "cuptiFinalize")),
          api.enable_callback = reinterpret_cast<decltype(api.enable_callback)>(dlsym(lib, "cuptiEnableCallback")),
          api.enable_domain = reinterpret_cast<decltype(api.enable_domain)>(dlsym(lib, "cuptiEnableDomain")),
          api.synchronize_devices = synchronize_primary_contexts, api.driver_version = cuda_driver_version,
          api.call_api_here = cuda_call_here, true);
}

std::string cupti_error(const CuptiApi& api, CUptiResult r) {
  const char* s = nullptr;
  if (api.get_result_string && api.get_result_string(r, &s) == CUPTI_SUCCESS && s) return s;
  return "CUPTI error " + std::to_string(static_cast<int>(r));
}

// Matched by name, so the list works across CUPTI versions.
bool is_noisy_api(const char* name) {
  static const std::set<std::string> kNoisy = {
      "cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaGetDeviceCount",
      "cudaDeviceGetAttribute", "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo",
      "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion", "cudaFuncGetAttributes",
      "cudaGetFuncBySymbol", "cudaPointerGetAttributes", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
      "cudaGetDeviceProperties", "cudaStreamGetPriority", "cudaStreamGetFlags", "cudaStreamGetId",
      "cuKernelGetName", "cuFuncGetName", "cuOccupancyMaxActiveBlocksPerMultiprocessor",
      "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaOccupancyMaxActiveClusters",
      "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
      "cudaOccupancyAvailableDynamicSMemPerBlock", "cuCtxGetLimit", "cuDeviceGetUuid", "cuDeviceTotalMem",
      "cuModuleGetLoadingMode", "cuDeviceGetName", "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxGetDevice", "cuDevicePrimaryCtxGetState", "cuKernelGetAttribute",
      "cuKernelGetFunction", "cuGetProcAddress", "cuDeviceGet", "cuDeviceGetAttribute", "cuPointerGetAttribute",
      "cuPointerGetAttributes", "cuFuncGetAttribute", "cuDriverGetVersion", "cuCtxGetId", "cuStreamIsCapturing",
      "cuStreamGetCaptureInfo", "cuGetErrorString", "cuGetErrorName", "cuCtxGetFlags", "cuStreamGetCtx",
      "cuDeviceGetCount", "cuFuncGetModule", "cuLibraryGetKernel", "cuModuleGetFunction",
      // Error strings and per-launch attribute set-up (ResNet-50 on torch 2.11: ~560 and ~70
      // a step, a third of its API records, none of them GPU work or a wait).
      "cudaGetErrorString", "cudaGetErrorName", "cudaFuncSetAttribute", "cuFuncSetAttribute",
      "cuKernelSetAttribute"};
  std::string n(name);
  if (auto pos = n.find("_v"); pos != std::string::npos) n.erase(pos);
  if (n.ends_with("_ptsz") || n.ends_with("_ptds")) n.erase(n.size() - 5);
  return kNoisy.count(n) > 0;
}

}  // namespace gpuscope::collector
