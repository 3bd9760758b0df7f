// libFuzzer entry point for the torch.profiler importer: any bytes, plain or
// gzip, go through the whole import into an in-memory database. Bad input
// must end in gpuscope::Error; anything else (a crash, a leak, another
// exception, undefined behaviour) is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "trace_formats/common/error.h"
#include "trace_formats/import/torch_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope::formats;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto src = ByteSource::from_memory(bytes, "fuzz-input");
  ImportOptions opt;
  // Small windows too, so that refills split every kind of token.
  opt.window = size > 0 && (data[size - 1] & 1) ? 64 : 4096;
  try {
    import_into(*src, ":memory:", opt);
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
