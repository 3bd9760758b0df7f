// How a report leaves gpuscope: every output of one command written through
// the one atomic file helper (common/atomic_file.h), so a failure leaves
// nothing behind. Check the names first with check_outputs (the same header),
// before any work that could fail late.
#pragma once

#include <string>
#include <vector>

namespace gpuscope::report {

struct Output {
  std::string path;  // "-" is stdout; an empty path is skipped
  std::string text;
};

// Writes every output; stdout ones go last so files are complete first. When
// one cannot be written (a name taken meanwhile, without `force`), the ones
// already written by this call are removed again and the Error is rethrown.
void write_outputs(const std::vector<Output>& outputs, bool force);

}  // namespace gpuscope::report
