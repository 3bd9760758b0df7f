#include "trace_formats/common/file_kind.h"

#include <cstdio>
#include <string_view>

namespace gpuscope {

std::optional<std::string> file_kind_problem(const std::string& path, bool json_guess) {
  unsigned char head[64] = {};
  size_t got = 0;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    got = std::fread(head, 1, sizeof head, f);
    std::fclose(f);
  }
  const std::string_view bytes(reinterpret_cast<const char*>(head), got);
  const std::string_view name(path);
  if (bytes.starts_with("\x28\xb5\x2f\xfd")) return "compressed with zstd; decompress it first: zstd -d " + path;
  if (bytes.starts_with("\xef\xbb\xbf"))
    return std::string(
        "starts with a UTF-8 byte-order mark, which no JSON reader here takes (torch.profiler writes none); remove "
        "those 3 bytes first: sed -i '1s/^\\xEF\\xBB\\xBF//' ") + path;
  const bool gzip = bytes.starts_with("\x1f\x8b");
  if (name.ends_with(".gz") && !gzip)
    return "named .gz but not gzip-compressed: neither a torch.profiler trace nor a gpuscope recording";
  size_t first = bytes.find_first_not_of(" \t\r\n");
  const bool json_like = first != std::string_view::npos && (bytes[first] == '{' || bytes[first] == '[');
  if (json_guess && !gzip && (json_like || name.ends_with(".json")))
    return "not a torch.profiler trace (no trace JSON it could read) and not a gpuscope recording";
  return std::nullopt;
}

}  // namespace gpuscope
