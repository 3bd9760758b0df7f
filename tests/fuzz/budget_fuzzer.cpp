// libFuzzer entry point for `gpuscope check`'s budget files: any bytes as the
// budget's JSON text. A budget that is not valid must end in gpuscope::Error
// naming the problem; anything else (a crash, undefined behaviour, another
// exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "trace_formats/common/error.h"
#include "regress/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    gpuscope::regress::parse_budget(std::string(reinterpret_cast<const char*>(data), size), "fuzz-budget.json");
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
