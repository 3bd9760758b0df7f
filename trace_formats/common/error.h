// Offline code reports failures with one exception type, caught at the CLI
// boundary and printed as one line. The collector never lets it escape.
#pragma once

#include <stdexcept>
#include <string>

namespace gpuscope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gpuscope
