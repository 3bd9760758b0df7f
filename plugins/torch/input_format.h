// Input shapes and dtypes of an op as JSON, in the form torch.profiler's
// traces use ("Input Dims" / "Input type"): one element per input,
// [[32,128],[128],[]] and ["float","float","Scalar"].
#pragma once

#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>

namespace gpuscope::torch_plugin {

struct FormattedInputs {
  uint32_t shapes_len = 0;
  uint32_t dtypes_len = 0;
};

// Quoted dtype names by ScalarType, made once per thread (no lock, no
// allocation): escaping the same few names for every op was a visible part of
// the plugin's per-op cost. The caller keeps one per thread in its own state,
// so no thread_local lookup is paid per tensor.
struct DtypeNames {
  static constexpr size_t kTypes = 64, kLen = 32;
  char text[kTypes][kLen];
  uint8_t len[kTypes] = {};  // 0: not made yet
};

// Writes both arrays into the given buffers (each at least 64 bytes). They
// always hold the same number of elements; inputs that do not fit are left
// out at the end.
FormattedInputs format_inputs(c10::ArrayRef<const c10::IValue> inputs, char* shapes, size_t shapes_cap,
                              char* dtypes, size_t dtypes_cap, DtypeNames& names);

}  // namespace gpuscope::torch_plugin
