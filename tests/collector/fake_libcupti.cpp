// A stand-in libcupti (and, built a second time with -DFAKE_LIBCUDA, a
// stand-in libcuda.so.1) that logs what the collector asks of it, so the
// tracing on/off sequence of cupti_source.cpp runs in CI without a GPU.
// The test reads the log through fake_calls().
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>

#include <cstring>
#include <string>

#define FAKE extern "C" __attribute__((visibility("default")))

namespace {
std::string g_log;  // one call per line
void note(const std::string& s) { g_log += s + "\n"; }
}  // namespace

#ifdef FAKE_LIBCUDA
FAKE const char* fake_cuda_calls() { return g_log.c_str(); }
FAKE CUresult cuDriverGetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
FAKE CUresult cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
FAKE CUresult cuDeviceGet(CUdevice* d, int i) { *d = i; return CUDA_SUCCESS; }
// An H100 SXM as its driver describes it (collector/device_query.cpp's test).
FAKE CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "NVIDIA H100 80GB HBM3", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}
FAKE CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 2619000; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 5120; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}
FAKE CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice) { *bytes = 85029158912ull; return CUDA_SUCCESS; }
FAKE CUresult cuDeviceGetUuid_v2(CUuuid* u, CUdevice) {
  for (int i = 0; i < 16; ++i) u->bytes[i] = static_cast<char>(i * 17);
  return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxGetState(CUdevice, unsigned* flags, int* active) {
  *flags = 0;
  *active = 1;
  return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(0x1);
  return CUDA_SUCCESS;
}
FAKE CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) { return CUDA_SUCCESS; }
FAKE CUresult cuCtxPushCurrent_v2(CUcontext) { return CUDA_SUCCESS; }
FAKE CUresult cuCtxPopCurrent_v2(CUcontext* c) { *c = nullptr; return CUDA_SUCCESS; }
// A real driver call reports its exit to CUPTI's subscriber: logged, then the
// fake libcupti's subscriber is called as CUPTI would (cbid 1 is cuCtxGetCurrent there).
FAKE CUresult cuCtxGetCurrent(CUcontext* c) {
  *c = reinterpret_cast<CUcontext>(0x1);
  using Note = void (*)(const char*);
  using Exit = void (*)(int, unsigned, int);
  static auto n = reinterpret_cast<Note>(dlsym(RTLD_DEFAULT, "fake_cupti_note"));
  static auto exit_cb = reinterpret_cast<Exit>(dlsym(RTLD_DEFAULT, "fake_api_exit"));
  if (n) n("cuCtxGetCurrent");
  note("cuCtxGetCurrent");
  if (exit_cb) exit_cb(CUPTI_CB_DOMAIN_DRIVER_API, 1, 0);
  return CUDA_SUCCESS;
}
FAKE CUresult cuCtxSynchronize() {
  // Logged into the CUPTI fake's log too, so that the order shows.
  using Note = void (*)(const char*);
  static auto n = reinterpret_cast<Note>(dlsym(RTLD_DEFAULT, "fake_cupti_note"));
  if (n) n("cuCtxSynchronize");
  note("cuCtxSynchronize");
  return CUDA_SUCCESS;
}
#else
FAKE const char* fake_calls() { return g_log.c_str(); }
FAKE void fake_cupti_note(const char* s) { note(s); }
FAKE CUptiResult cuptiActivityEnable(CUpti_ActivityKind k) { note("enable " + std::to_string(k)); return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiActivityDisable(CUpti_ActivityKind k) { note("disable " + std::to_string(k)); return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) {
  return CUPTI_SUCCESS;
}
FAKE CUptiResult cuptiActivityFlushAll(uint32_t) { note("flush"); return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) { return CUPTI_ERROR_MAX_LIMIT_REACHED; }
FAKE CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* n) { *n = 0; return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  static const char* kRuntime[] = {"", "cudaGetDevice_v3020", "cudaLaunchKernel_v7000",
                                   "cudaStreamBeginCapture_v10000", "cudaStreamEndCapture_v10000",
                                   "cudaGraphLaunch_v10000", "cudaSetDevice_v3020"};
  static const char* kDriver[] = {"", "cuCtxGetCurrent", "cuLaunchKernel", "cuStreamBeginCapture_v2",
                                  "cuStreamEndCapture", "cuGraphLaunch", "cuDevicePrimaryCtxRetain"};
  if (cbid == 0 || cbid > 6) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? kRuntime[cbid] : kDriver[cbid];
  return CUPTI_SUCCESS;
}
FAKE CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t on) {
  note("runtime " + std::to_string(cbid) + (on ? " on" : " off"));
  return CUPTI_SUCCESS;
}
FAKE CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t on) {
  note("driver " + std::to_string(cbid) + (on ? " on" : " off"));
  return CUPTI_SUCCESS;
}
CUpti_CallbackFunc g_callback = nullptr;
FAKE CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain d, CUpti_CallbackId cbid) {
  note("callback " + std::to_string(d) + " " + std::to_string(cbid) + (on ? " on" : " off"));
  return CUPTI_SUCCESS;
}
bool g_driver_domain_fails = false;
FAKE void fake_driver_domain_fails() { g_driver_domain_fails = true; }
FAKE CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle, CUpti_CallbackDomain d) {
  note("domain " + std::to_string(d) + (on ? " on" : " off"));
  if (on && d == CUPTI_CB_DOMAIN_DRIVER_API && g_driver_domain_fails) return CUPTI_ERROR_UNKNOWN;
  return CUPTI_SUCCESS;
}
// Plays CUPTI calling the subscriber at the exit of an API call returning rc.
FAKE void fake_api_exit(CUpti_CallbackDomain d, CUpti_CallbackId cbid, int rc) {
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_EXIT;
  data.functionReturnValue = &rc;
  if (g_callback) g_callback(nullptr, d, cbid, &data);
}
// ... and at the entry of one (a call under way on another thread).
FAKE void fake_api_enter(CUpti_CallbackDomain d, CUpti_CallbackId cbid) {
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  if (g_callback) g_callback(nullptr, d, cbid, &data);
}
FAKE CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc fn, void*) {
  g_callback = fn;
  note("subscribe");
  *s = reinterpret_cast<CUpti_SubscriberHandle>(0x1);
  return CUPTI_SUCCESS;
}
FAKE CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) { note("unsubscribe"); return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiGetResultString(CUptiResult, const char** s) { *s = "fake error"; return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) { return CUPTI_SUCCESS; }
// Logged as "attribute N = V (S bytes)", the value read at the size given.
FAKE CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t* size, void* value) {
  uint64_t v = 0;
  if (*size == 1) v = *static_cast<uint8_t*>(value);
  if (*size == sizeof(size_t)) v = *static_cast<size_t*>(value);
  note("attribute " + std::to_string(a) + " = " + std::to_string(v) + " (" + std::to_string(*size) + " bytes)");
  return CUPTI_SUCCESS;
}
FAKE CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind, uint64_t) { return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind, uint64_t*) { return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiGetVersion(uint32_t* v) { *v = 130000; return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }
FAKE CUptiResult cuptiFinalize() { note("finalize"); return CUPTI_SUCCESS; }
#endif
