#include "model/importer.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/error.h"

#ifdef GPUSCOPE_HAVE_FORMATS
#include "import/torch_import.h"
#endif

namespace gpuscope::gui {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool looks_like_trace_json(const std::string& path) {
  return ends_with(path, ".json") || ends_with(path, ".json.gz");
}

bool have_importer() {
#ifdef GPUSCOPE_HAVE_FORMATS
  return true;
#else
  return false;
#endif
}

std::string import_to_temp_database(const std::string& path) {
#ifdef GPUSCOPE_HAVE_FORMATS
  // A fresh name in the temp folder; the importer wants it not to exist.
  std::string dir = std::filesystem::temp_directory_path().string();
  std::string templ = dir + "/gpuscope-view-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) throw Error(path + ": cannot create a temporary folder in " + dir);
  const std::string folder(buf.data());
  const std::string db = folder + "/import.db";
  formats::ImportOptions options;
  options.meta.emplace_back("source", "torch.profiler trace " + path);
  try {
    formats::import_torch_trace(path, db, options);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(folder, ec);
    throw;
  }
  return db;
#else
  throw Error(path +
              ": a torch.profiler trace, and this viewer was built without the importer "
              "(gs_formats); convert it with `gpuscope import` and open the .db");
#endif
}

}  // namespace gpuscope::gui
