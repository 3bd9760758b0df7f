#include "range_names.h"

#include <charconv>

#include "gpuscope/plugin.h"

namespace gpuscope::torch_plugin {

RangeInfo classify_range(std::string_view name) {
  RangeInfo info;
  constexpr std::string_view kProfilerStep = "ProfilerStep#";
  constexpr std::string_view kDataLoader = "enumerate(DataLoader)#";
  constexpr std::string_view kOptimizerStep = "Optimizer.step#";
  constexpr std::string_view kOptimizer = "Optimizer.";
  if (name.starts_with(kProfilerStep)) {
    std::string_view digits = name.substr(kProfilerStep.size());
    int64_t n = -1;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && end == digits.data() + digits.size() && n >= 0) {
      info.kind = RangeKind::kProfilerStep;
      info.step_number = n;
    }
  } else if (name.starts_with(kDataLoader)) {
    info.kind = RangeKind::kDataLoader;
  } else if (name.starts_with(kOptimizerStep)) {
    info.kind = RangeKind::kOptimizerStep;
    std::string_view rest = name.substr(kOptimizerStep.size());
    // "<Class>.step"; a class name holds no dot, so the first dot ends it.
    info.optimizer_class = rest.substr(0, rest.find('.'));
  } else if (name.starts_with(kOptimizer)) {
    info.kind = RangeKind::kOptimizerOther;
  }
  return info;
}

uint32_t range_source(RangeKind kind) {
  switch (kind) {
    case RangeKind::kDataLoader:
      return GPUSCOPE_RANGE_DATALOADER;
    case RangeKind::kOptimizerStep:
    case RangeKind::kOptimizerOther:
      return GPUSCOPE_RANGE_OPTIMIZER;
    case RangeKind::kProfilerStep:
      return GPUSCOPE_RANGE_PROFILER_STEP;
    case RangeKind::kUser:
      break;
  }
  return GPUSCOPE_RANGE_TORCH_USER;
}

}  // namespace gpuscope::torch_plugin
