#include "trace_formats/import/open_recording.h"

#include <filesystem>

#include "trace_formats/common/atomic_file.h"
#include "trace_formats/common/file_kind.h"
#include "trace_formats/import/importer.h"

namespace gpuscope::formats {
namespace {

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
}

std::string temp_folder() {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  return ec || dir.empty() ? std::string("/tmp") : dir.string();
}

}  // namespace

OpenedRecording::OpenedRecording(OpenedRecording&&) noexcept = default;
OpenedRecording& OpenedRecording::operator=(OpenedRecording&&) noexcept = default;
OpenedRecording::~OpenedRecording() = default;

std::string OpenedRecording::name_input(std::string message) const {
  if (temp_) replace_all(message, path_, input_);
  return message;
}

OpenedRecording open_recording(const std::string& path, bool progress) {
  OpenedRecording r;
  r.input_ = r.path_ = path;
  const Sniffed s = sniff_file(path);
  if (s.recording || !s.importer) return r;
  if (auto why = file_kind_problem(path, false)) throw Error(path + ": " + *why);
  r.importer_ = s.importer;
  try {
    // Never committed: the AtomicFile's temporary file is the recording, a
    // fresh name created with O_EXCL|O_NOFOLLOW and removed with its -wal,
    // -shm and -journal on every exit path.
    r.temp_ = std::make_unique<AtomicFile>(temp_folder() + "/gpuscope-import.db", AtomicFile::Kind::kSqlite);
  } catch (const Error& e) {
    throw Error(path + ": cannot make a temporary recording to import it into: " + e.what());
  }
  r.temp_->close();
  r.path_ = r.temp_->temp_path();
  auto src = ByteSource::open_file(path);
  ImportOptions options;
  options.progress = progress;
  r.read([&] { s.importer->import(*src, r.path_, options); });
  return r;
}

}  // namespace gpuscope::formats
