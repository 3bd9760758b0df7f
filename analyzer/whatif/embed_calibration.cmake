# Writes OUT: a C++ file holding every analyzer/whatif/calibration/*.json as a
# string, so the analyzer needs no data files at run time.
# cmake -DSRC=<dir> -DOUT=<file> -P embed_calibration.cmake
file(GLOB files "${SRC}/*.json")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME)
  file(READ "${f}" text)
  string(APPEND body "      {\"${name}\", R\"gscal(${text})gscal\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from analyzer/whatif/calibration/*.json by embed_calibration.cmake.
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::analyzer::whatif {

const std::vector<std::pair<std::string, std::string>>& embedded_calibration_files() {
  static const std::vector<std::pair<std::string, std::string>> files = {
${body}  };
  return files;
}

}  // namespace gpuscope::analyzer::whatif
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
