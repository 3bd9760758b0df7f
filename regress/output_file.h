// Report files for the CI commands: refused when they exist (unless forced),
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
// the same path named twice, more than one "-".
void check_outputs(const std::vector<std::string>& paths, bool force);

// Writes every output; stdout ones go last so files are complete first.
void write_outputs(const std::vector<Output>& outputs);

}  // namespace gpuscope::regress
