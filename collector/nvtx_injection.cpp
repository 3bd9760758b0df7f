// NVTX v3 injection: NVTX calls InitializeInjectionNvtx2 once per process (the
// library named by NVTX_INJECTION64_PATH); we fill its function table with
// handlers that copy each event into the calling thread's ring. Works with or
// without a GPU and without CUPTI.
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "collector/clock.h"
#include "collector/collector.h"
#include "collector/emit.h"

namespace gpuscope::collector {
namespace {

std::atomic<uint64_t> g_next_range_id{1};
std::atomic<uint64_t> g_next_domain{1};

uint64_t domain_key(nvtxDomainHandle_t d) { return reinterpret_cast<uint64_t>(d); }

std::string_view message_of(const nvtxEventAttributes_t* a) {
  if (!a) return {};
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return a->message.ascii ? std::string_view(a->message.ascii) : std::string_view();
    case NVTX_MESSAGE_TYPE_REGISTERED:
      // Our registered-string handles point at a copy of the string.
      return a->message.registered ? std::string_view(reinterpret_cast<const char*>(a->message.registered))
                                   : std::string_view();
    case NVTX_MESSAGE_TYPE_UNICODE:
      return "<wide-character NVTX message>";
    default:
      return {};
  }
}

void range_with_attrs(RecordType type, uint64_t domain, uint64_t id, const nvtxEventAttributes_t* a) {
  bool has_color = a && a->colorType == NVTX_COLOR_ARGB;
  emit_nvtx_range(type, now_ns(), domain, id, message_of(a), has_color, has_color ? a->color : 0,
                  a ? a->category : 0);
}

void NVTX_API mark_ex(const nvtxEventAttributes_t* a) {
  if (enabled()) range_with_attrs(RecordType::kNvtxMark, 0, 0, a);
}
void NVTX_API mark_a(const char* m) {
  if (enabled()) emit_nvtx_range(RecordType::kNvtxMark, now_ns(), 0, 0, m ? m : "", false, 0, 0);
}
nvtxRangeId_t NVTX_API range_start_ex(const nvtxEventAttributes_t* a) {
  uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  if (enabled()) range_with_attrs(RecordType::kNvtxStart, 0, id, a);
  return id;
}
nvtxRangeId_t NVTX_API range_start_a(const char* m) {
  uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  if (enabled()) emit_nvtx_range(RecordType::kNvtxStart, now_ns(), 0, id, m ? m : "", false, 0, 0);
  return id;
}
void NVTX_API range_end(nvtxRangeId_t id) {
  if (enabled()) emit_nvtx_end(RecordType::kNvtxEnd, now_ns(), 0, id);
}
int NVTX_API range_push_ex(const nvtxEventAttributes_t* a) {
  if (enabled()) range_with_attrs(RecordType::kNvtxPush, 0, 0, a);
  return 0;
}
int NVTX_API range_push_a(const char* m) {
  if (enabled()) emit_nvtx_range(RecordType::kNvtxPush, now_ns(), 0, 0, m ? m : "", false, 0, 0);
  return 0;
}
int NVTX_API range_pop() {
  if (enabled()) emit_nvtx_end(RecordType::kNvtxPop, now_ns(), 0, 0);
  return 0;
}

void NVTX_API domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  if (enabled()) range_with_attrs(RecordType::kNvtxMark, domain_key(d), 0, a);
}
nvtxRangeId_t NVTX_API domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  if (enabled()) range_with_attrs(RecordType::kNvtxStart, domain_key(d), id, a);
  return id;
}
void NVTX_API domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  if (enabled()) emit_nvtx_end(RecordType::kNvtxEnd, now_ns(), domain_key(d), id);
}
int NVTX_API domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  if (enabled()) range_with_attrs(RecordType::kNvtxPush, domain_key(d), 0, a);
  return 0;
}
int NVTX_API domain_range_pop(nvtxDomainHandle_t d) {
  if (enabled()) emit_nvtx_end(RecordType::kNvtxPop, now_ns(), domain_key(d), 0);
  return 0;
}
nvtxDomainHandle_t NVTX_API domain_create_a(const char* name) {
  // Handles are opaque to the application; a counter is enough.
  auto handle = reinterpret_cast<nvtxDomainHandle_t>(g_next_domain.fetch_add(1, std::memory_order_relaxed));
  ensure_started();
  emit_nvtx_domain(domain_key(handle), name ? name : "");
  return handle;
}
void NVTX_API domain_destroy(nvtxDomainHandle_t) {}
nvtxStringHandle_t NVTX_API domain_register_string_a(nvtxDomainHandle_t, const char* s) {
  // Registration is rare (once per string); the copy lives for the process.
  return reinterpret_cast<nvtxStringHandle_t>(strdup(s ? s : ""));
}

template <class F>
void set_slot(NvtxFunctionTable table, unsigned size, unsigned cbid, F fn) {
  if (cbid < size && table[cbid]) *table[cbid] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace
}  // namespace gpuscope::collector

using namespace gpuscope::collector;

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  if (!nvtx_wanted()) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || !callbacks->GetModuleFunctionTable) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || !core) return 0;
  set_slot(core, core_size, NVTX_CBID_CORE_MarkEx, mark_ex);
  set_slot(core, core_size, NVTX_CBID_CORE_MarkA, mark_a);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartEx, range_start_ex);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeStartA, range_start_a);
  set_slot(core, core_size, NVTX_CBID_CORE_RangeEnd, range_end);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushEx, range_push_ex);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePushA, range_push_a);
  set_slot(core, core_size, NVTX_CBID_CORE_RangePop, range_pop);
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2) {
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, domain_range_start_ex);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, domain_range_end);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, domain_range_push_ex);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, domain_range_pop);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, domain_create_a);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
    set_slot(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, domain_register_string_a);
  }
  ensure_started();
  return 1;
}
