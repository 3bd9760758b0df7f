#include "regress/output_file.h"

#include <sys/stat.h>

#include <cstdio>
#include <set>

#include "common/error.h"
#include "common/text_file.h"

namespace gpuscope::regress {
void check_outputs(const std::vector<std::string>& paths, bool force) {
  std::set<std::string> seen;
  for (const auto& p : paths) {
    if (p.empty()) continue;
    if (!seen.insert(p).second)
      throw Error(p == "-" ? std::string("-: only one report can go to stdout") : p + ": named for two reports");
    if (p == "-") continue;
    struct stat st {};
    if (stat(p.c_str(), &st) == 0) {
      if (!force) throw Error(p + ": already exists; use --force to overwrite");
      if (S_ISDIR(st.st_mode)) throw Error(p + ": is a directory");
    }
  }
}

void write_outputs(const std::vector<Output>& outputs) {
  for (const auto& o : outputs)
    if (!o.path.empty() && o.path != "-") write_file_atomically(o.path, o.text);
  for (const auto& o : outputs)
    if (o.path == "-") std::fwrite(o.text.data(), 1, o.text.size(), stdout);
}

}  // namespace gpuscope::regress
