// What the viewer reads for the file the user opened: a recording itself, or
// (when this build has gs_formats) a temporary recording imported from a
// trace that the format registry recognizes by content
// (formats::open_recording, the same opening every gpuscope command uses).
#pragma once

#include <memory>
#include <string>

namespace gpuscope::gui {

struct OpenedInput {
  std::string database;              // the file to read
  std::shared_ptr<const void> temp;  // the imported copy, removed with its last owner; null for a recording
};

// Throws gpuscope::Error("<path>: <reason>") when a trace does not import.
OpenedInput open_input(const std::string& path);
bool have_importer();

}  // namespace gpuscope::gui
