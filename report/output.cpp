#include "report/output.h"

#include <cstdio>

#include "trace_formats/common/atomic_file.h"

namespace gpuscope::report {

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

}  // namespace gpuscope::report
