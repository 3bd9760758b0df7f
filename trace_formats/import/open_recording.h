// The one way offline tools open their input: a gpuscope recording is read in
// place; a trace that one of the importers (importer.h) recognizes by content
// is imported into a temporary recording first, which is removed when the
// OpenedRecording goes and on every other exit path (AtomicFile: exceptions,
// SIGINT, SIGTERM, SIGHUP). So every command that takes a recording also
// takes a torch.profiler trace.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "trace_formats/common/error.h"

namespace gpuscope {
class AtomicFile;
}

namespace gpuscope::formats {

struct Importer;

class OpenedRecording {
 public:
  OpenedRecording(OpenedRecording&&) noexcept;
  OpenedRecording& operator=(OpenedRecording&&) noexcept;
  ~OpenedRecording();

  const std::string& input() const { return input_; }  // what the user named
  const std::string& path() const { return path_; }    // the database to read
  const Importer* importer() const { return importer_; }
  bool imported() const { return importer_ != nullptr; }

  // `message` with the temporary recording's name replaced by the input's.
  std::string name_input(std::string message) const;
  // f(), with an Error that names the temporary recording rethrown naming the input.
  template <class F>
  decltype(auto) read(F&& f) const {
    try {
      return std::forward<F>(f)();
    } catch (const Error& e) {
      if (!imported()) throw;
      throw Error(name_input(e.what()));
    }
  }

 private:
  friend OpenedRecording open_recording(const std::string& path, bool progress);
  OpenedRecording() = default;
  std::string input_, path_;
  const Importer* importer_ = nullptr;
  std::unique_ptr<AtomicFile> temp_;
};

// Throws Error("<path>: <problem>") when `path` is a trace that does not
// import, or the temporary recording cannot be made. Anything that is not a
// recognized trace is returned as is, for store::Reader to accept or refuse.
// `progress`: the importer's progress line on stderr (only on a terminal).
OpenedRecording open_recording(const std::string& path, bool progress = false);

}  // namespace gpuscope::formats
