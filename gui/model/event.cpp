#include "gui/model/event.h"

namespace gpuscope::gui {

std::string_view kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "memcpy";
    case EventKind::kMemset: return "memset";
    case EventKind::kApiCall: return "CUDA API call";
    case EventKind::kSync: return "GPU wait";
    case EventKind::kOp: return "op";
    case EventKind::kRange: return "range";
    case EventKind::kDataLoader: return "DataLoader wait";
    case EventKind::kOptimizer: return "optimizer";
    case EventKind::kAsyncRange: return "start/end range";
    case EventKind::kMark: return "mark";
    case EventKind::kTracerOverhead: return "tracer overhead";
    case EventKind::kCount: break;
  }
  return "?";
}

std::string_view kind_table(EventKind kind) {
  switch (kind) {
    case EventKind::kKernel: return "kernel";
    case EventKind::kMemcpy: return "memcpy";
    case EventKind::kMemset: return "memset";
    case EventKind::kApiCall: return "api_call";
    case EventKind::kSync: return "sync";
    case EventKind::kOp: return "op";
    default: return "range";
  }
}

}  // namespace gpuscope::gui
