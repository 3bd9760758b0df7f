// Writes a whole text file next to its target and renames it into place, so
// a failure never leaves a partial file under the user's name.
#pragma once

#include <string>

namespace gpuscope {

// Throws Error naming `path` when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace gpuscope
