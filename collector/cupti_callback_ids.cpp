#include "collector/cupti_callback_ids.h"

#include <array>
#include <string_view>

namespace gpuscope::collector::cupti_source {

bool CallbackIds::contains(const std::vector<uint32_t>& ids, uint32_t id) {
  for (uint32_t x : ids)
    if (x == id) return true;
  return false;
}

const CallbackIds& callback_ids(const CuptiApi& api, CUpti_CallbackDomain domain) {
  static const std::array<CallbackIds, 2> ids = [&api] {
    std::array<CallbackIds, 2> out;
    const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
    const uint32_t last[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
    const std::string_view begin[2] = {"cudaStreamBeginCapture", "cuStreamBeginCapture"};
    const std::string_view end[2] = {"cudaStreamEndCapture", "cuStreamEndCapture"};
    const std::string_view launch[2] = {"cudaGraphLaunch", "cuGraphLaunch"};
    for (int d = 0; d < 2; ++d) {
      for (uint32_t cbid = 1; cbid < last[d]; ++cbid) {
        const char* name = nullptr;
        if (api.get_callback_name(domains[d], cbid, &name) != CUPTI_SUCCESS || !name) continue;
        const std::string_view n(name);
        if (is_noisy_api(name)) out[d].noisy.push_back(cbid);
        if (n.starts_with(begin[d])) out[d].capture_begin.push_back(cbid);
        if (n.starts_with(end[d])) out[d].capture_end.push_back(cbid);
        if (n.starts_with(launch[d])) out[d].graph_launch.push_back(cbid);
        if (d == 1 && (n.starts_with("cuCtxCreate") || n.starts_with("cuDevicePrimaryCtxRetain")))
          out[d].context_create.push_back(cbid);
      }
    }
    return out;
  }();
  return ids[domain == CUPTI_CB_DOMAIN_DRIVER_API];
}

}  // namespace gpuscope::collector::cupti_source
