#include "regress/output_file.h"

#include <cstdio>

#include "trace_formats/common/atomic_file.h"

namespace gpuscope::regress {

void check_outputs(const std::vector<std::string>& paths, const std::vector<std::string>& inputs, bool force) {
  gpuscope::check_outputs(paths, inputs, force);
}

void write_outputs(const std::vector<Output>& outputs, bool force) {
  std::vector<std::string> written;
  try {
    for (const auto& o : outputs)
      if (!o.path.empty() && o.path != "-") {
        write_file_atomically(o.path, o.text, force);
        written.push_back(o.path);
      }
  } catch (...) {
    for (const auto& p : written) std::remove(p.c_str());
    throw;
  }
  for (const auto& o : outputs)
    if (o.path == "-") std::fwrite(o.text.data(), 1, o.text.size(), stdout);
}

}  // namespace gpuscope::regress
