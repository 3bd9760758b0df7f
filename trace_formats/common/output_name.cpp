#include "trace_formats/common/output_name.h"

#include <unistd.h>

#include <cstdlib>

namespace gpuscope {

std::string expand_output_name(std::string_view pattern, long pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out += c;
      continue;
    }
    char k = pattern[i + 1];
    if (k == 'p') {
      out += std::to_string(pid);
      ++i;
    } else if (k == 'h') {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      out += host;
      ++i;
    } else if (k == '%') {
      out += '%';
      ++i;
    } else if (k == 'q' && i + 2 < pattern.size() && pattern[i + 2] == '{') {
      size_t close = pattern.find('}', i + 3);
      if (close == std::string_view::npos) {
        out += c;
        continue;
      }
      std::string var(pattern.substr(i + 3, close - i - 3));
      if (const char* v = std::getenv(var.c_str())) out += v;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> unset_output_name_variable(std::string_view pattern) {
  for (size_t i = 0; i + 2 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == '%') {
      ++i;  // %% is a percent sign, never the start of an escape
      continue;
    }
    if (pattern[i + 1] != 'q' || pattern[i + 2] != '{') continue;
    const size_t close = pattern.find('}', i + 3);
    if (close == std::string_view::npos) return std::nullopt;
    std::string var(pattern.substr(i + 3, close - i - 3));
    const char* v = std::getenv(var.c_str());
    if (!v || !*v) return var;
    i = close;
  }
  return std::nullopt;
}

}  // namespace gpuscope
