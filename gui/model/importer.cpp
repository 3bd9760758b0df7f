#include "gui/model/importer.h"

#ifdef GPUSCOPE_HAVE_FORMATS
#include "trace_formats/import/open_recording.h"
#endif

namespace gpuscope::gui {

bool have_importer() {
#ifdef GPUSCOPE_HAVE_FORMATS
  return true;
#else
  return false;
#endif
}

OpenedInput open_input(const std::string& path) {
#ifdef GPUSCOPE_HAVE_FORMATS
  auto opened = std::make_shared<const formats::OpenedRecording>(formats::open_recording(path));
  if (opened->imported()) return {opened->path(), opened};
#endif
  // Without the importer a trace reaches store::Reader, which refuses it in one line.
  return {path, nullptr};
}

}  // namespace gpuscope::gui
