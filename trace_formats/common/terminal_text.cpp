#include "common/terminal_text.h"

namespace gpuscope {

std::string terminal_safe(std::string_view s, bool keep_newlines) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c != 0x7f) || (keep_newlines && (c == '\n' || c == '\t'))) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace gpuscope
