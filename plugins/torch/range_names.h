// What a RecordFunction range name means to gpuscope: the DataLoader,
// optimizer and profiler-step markers torch emits, or a user range. Pure
// string logic, kept free of torch so it is unit-tested without it.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuscope::torch_plugin {

enum class RangeKind : uint8_t {
  kUser,           // record_function / RECORD_USER_SCOPE
  kDataLoader,     // enumerate(DataLoader)#..._DataLoaderIter.__next__
  kOptimizerStep,  // Optimizer.step#<Class>.step
  kOptimizerOther, // Optimizer.zero_grad#<Class>.zero_grad and other Optimizer.* ranges
  kProfilerStep,   // ProfilerStep#N
};

struct RangeInfo {
  RangeKind kind = RangeKind::kUser;
  int64_t step_number = -1;           // ProfilerStep#N: N
  std::string_view optimizer_class;  // Optimizer.step#<Class>.step: Class
};

RangeInfo classify_range(std::string_view name);

// The range_source enum value (docs/schema.md) a kind is stored under.
uint32_t range_source(RangeKind kind);

// Ops that exist only to open and close Python record_function ranges; they
// carry no work of their own and would double every annotation.
inline bool is_record_function_plumbing(const char* name) {
  return name && name[0] == 'p' && std::string_view(name).starts_with("profiler::_record_function");
}

// Ops the autograd engine runs on behalf of a backward node.
inline bool is_engine_backward(const char* name) {
  return name && name[0] == 'a' && std::string_view(name).starts_with("autograd::engine::evaluate_function");
}

}  // namespace gpuscope::torch_plugin
