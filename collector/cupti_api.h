// CUPTI entry points, resolved at run time so the collector loads on machines
// without a GPU or CUPTI. Tests fill the table with fakes.
#pragma once

#include <cupti.h>

#include <string>

namespace gpuscope::collector {

struct CuptiApi {
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) get_num_dropped = nullptr;
  decltype(&cuptiGetCallbackName) get_callback_name = nullptr;
  decltype(&cuptiActivityEnableRuntimeApi) enable_runtime_api = nullptr;
  decltype(&cuptiActivityEnableDriverApi) enable_driver_api = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp_callback = nullptr;
  decltype(&cuptiActivitySetAttribute) set_attribute = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push_external_id = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop_external_id = nullptr;
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiSetThreadIdType) set_thread_id_type = nullptr;
  decltype(&cuptiFinalize) finalize = nullptr;  // optional: tears CUPTI down while tracing is off
  decltype(&cuptiEnableCallback) enable_callback = nullptr;  // optional: stream-capture callbacks
  decltype(&cuptiEnableDomain) enable_domain = nullptr;      // optional: every API exit, to tear down there
  // Not CUPTI: waits until every active primary CUDA context is idle (libcuda),
  // which cuptiFinalize needs first. False when it could not make sure.
  bool (*synchronize_devices)() = nullptr;
  // Not CUPTI: the CUDA driver's version (12060 = 12.6), 0 when unknown.
  // cuptiFinalize with CUDA graphs crashed before 12.6 (PyTorch #112507, #146604).
  int (*driver_version)() = nullptr;
  // Not CUPTI: one cheap CUDA driver call on this thread (cuCtxGetCurrent),
  // whose exit CUPTI reports to its subscriber. A teardown armed for the next
  // API exit (CUPTI's documented point for cuptiFinalize) then happens here
  // and now, on this thread, instead of whenever the job calls CUDA next.
  void (*call_api_here)() = nullptr;
};

// Loads libcupti (open_cupti in cupti_locate.h: one already in the process, then GPUSCOPE_CUPTI, the
// library path and the CUDA install). On failure returns false and says why.
bool load_cupti(CuptiApi& api, std::string& why);

// Human-readable CUPTI error text.
std::string cupti_error(const CuptiApi& api, CUptiResult r);

// Calls made many times per step that say nothing about performance
// (cudaGetDevice and the like): CUPTI is told not to record them, and the
// decoder drops the few recorded in the moment after an enable, before CUPTI
// has been told again (it forgets at every disable).
bool is_noisy_api(const char* name);

}  // namespace gpuscope::collector
