#include "trace_formats/export/json_text.h"

#include <cmath>
#include <cstring>

#include "trace_formats/common/text.h"
#include "trace_formats/import/json_cursor.h"

namespace gpuscope::formats {

bool is_embeddable_json(std::string_view s) {
  if (s.empty() || !is_valid_utf8(s)) return false;
  for (char ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 && ch != ' ' && ch != '\n' && ch != '\r' && ch != '\t') return false;
  // Parse it strictly; a trailing space lets the cursor see the end of a bare number.
  std::string padded(s);
  padded += ' ';
  try {
    json::Cursor c(padded.data(), padded.data() + padded.size(), true, 0);
    c.set_strict();
    c.skip_value();
    while (c.p < padded.data() + padded.size()) {
      if (*c.p != ' ' && *c.p != '\n' && *c.p != '\r' && *c.p != '\t') return false;
      ++c.p;
    }
    return true;
  } catch (const json::SyntaxError&) {
    return false;
  } catch (const json::NeedMore&) {
    return false;
  }
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace gpuscope::formats
