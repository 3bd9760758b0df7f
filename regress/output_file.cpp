#include "regress/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <set>

#include "common/error.h"

namespace gpuscope::regress {
namespace {

void write_atomically(const std::string& out, const std::string& text) {
  const std::string tmp = out + ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(out + ": cannot write");
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      throw Error(out + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(out + ": cannot rename the finished report into place");
  }
}

}  // namespace

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
    if (!o.path.empty() && o.path != "-") write_atomically(o.path, o.text);
  for (const auto& o : outputs)
    if (o.path == "-") std::fwrite(o.text.data(), 1, o.text.size(), stdout);
}

}  // namespace gpuscope::regress
