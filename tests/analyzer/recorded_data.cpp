#include "tests/analyzer/recorded_data.h"

#include <zstd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "tests/analyzer/scenarios.h"

namespace gpuscope::testing {

namespace fs = std::filesystem;

std::vector<fs::path> recorded_data() {
  const fs::path data = fs::path(GPUSCOPE_SOURCE_DIR) / "tests" / "data";
  std::vector<fs::path> out;
  if (!fs::exists(data)) return out;
  for (const auto& e : fs::directory_iterator(data)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".db") || name.ends_with(".db.zst")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string recording_stem(const fs::path& p) {
  std::string name = p.filename().string();
  for (const char* ext : {".db.zst", ".db"})
    if (name.ends_with(ext)) return name.substr(0, name.size() - std::string(ext).size());
  return name;
}

std::string readable_recording(const fs::path& p) {
  if (p.extension() != ".zst") return p.string();
  std::ifstream in(p, std::ios::binary);
  const std::string packed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string out_path = temp_db("unpacked_" + recording_stem(p));
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  ZSTD_DStream* z = ZSTD_createDStream();
  ZSTD_initDStream(z);
  std::string buf(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer input{packed.data(), packed.size(), 0};
  while (input.pos < input.size) {
    ZSTD_outBuffer output{buf.data(), buf.size(), 0};
    const size_t rc = ZSTD_decompressStream(z, &output, &input);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDStream(z);
      throw std::runtime_error(p.string() + ": " + ZSTD_getErrorName(rc));
    }
    out.write(buf.data(), static_cast<std::streamsize>(output.pos));
  }
  ZSTD_freeDStream(z);
  return out_path;
}

}  // namespace gpuscope::testing
