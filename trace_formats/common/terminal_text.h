// Text from input files (names, categories, keys, messages) on its way to a
// terminal: control bytes could move the cursor, retitle the window or worse
// (ESC ] 0 ; ... BEL), so C0 controls and DEL are shown as \xNN instead.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope {

// Every byte below 0x20 and 0x7f as "\xNN"; with `keep_newlines`, '\n' and '\t' stay.
std::string terminal_safe(std::string_view s, bool keep_newlines = false);

}  // namespace gpuscope
