// Report files for the CI commands, written through the one atomic output
// helper (common/atomic_file.h): checked before anything is written, each
// written under a temporary name and renamed, so a failure leaves nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpuscope::regress {

struct Output {
  std::string path;  // "-" is stdout
  std::string text;
};

// Throws Error before anything is written: an existing file without `force`,
// an output that is one of `inputs` (even with `force`), the same file named
// twice, more than one "-".
void check_outputs(const std::vector<std::string>& paths, const std::vector<std::string>& inputs, bool force);

// Writes every output; stdout ones go last so files are complete first. When
// one cannot be written (a name taken meanwhile, without `force`), the ones
// already written by this call are removed again and the Error is rethrown.
void write_outputs(const std::vector<Output>& outputs, bool force);

}  // namespace gpuscope::regress
