// libFuzzer entry point for the small text parsers behind command-line
// options: output-name templates (%p, %h, %q{VAR}, %%; `record -o` and
// GPUSCOPE_OUTPUT), step ranges (`analyze --steps A-B`) and percentages
// (`diff --threshold`). Bad text must end in gpuscope::Error or be kept as
// written; anything else (a crash, undefined behaviour, another exception) is
// a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyzer/analysis.h"
#include "trace_formats/common/error.h"
#include "trace_formats/common/output_name.h"
#include "regress/diff.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)gpuscope::expand_output_name(text, 4242);
  try {
    gpuscope::analyzer::Options options;
    gpuscope::analyzer::parse_step_range(text, options);
  } catch (const gpuscope::Error&) {
  }
  try {
    (void)gpuscope::regress::parse_percent(text, "--threshold");
  } catch (const gpuscope::Error&) {
  }
  return 0;
}
