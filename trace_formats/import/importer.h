// The formats gpuscope imports, behind one small interface. An importer
// recognizes its input by content (the first bytes, gunzipped when they are
// gzip; never by the file's name) and writes it into a gpuscope database.
// The list is in importers.cpp: a new format is one new file plus one line there.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trace_formats/import/byte_source.h"
#include "trace_formats/import/kineto_mapper.h"
#include "trace_formats/import/trace_reader.h"

namespace gpuscope::formats {

struct ImportOptions {
  bool force = false;     // replace an existing output
  bool progress = false;  // a progress line on stderr (only when it is a terminal)
  std::vector<std::pair<std::string, std::string>> meta;  // extra meta rows, e.g. gpuscope_version
  size_t window = size_t{4} << 20;  // initial parse window; tests shrink it
  // Events held back to find the time origin first (origin_lookahead.h); 0
  // writes from the first event on. Tests vary it: the rows must not change.
  size_t lookahead_events = 8192;
};

struct ImportResult {
  ImportCounts counts;
  ReadResult read;
  double seconds = 0;
};

// At most this many bytes of an input's start are shown to sniff().
inline constexpr size_t kSniffBytes = 512;

struct Importer {
  const char* name;  // "torch.profiler", in messages
  const char* what;  // one line for help texts: what the format is and which files hold it
  // Whether `head`, the input's first bytes (gunzipped), start this format.
  bool (*sniff)(std::string_view head);
  // Imports `src` into `db_path`, an empty file the caller created and removes
  // when this throws. Throws Error("<input>: <problem>").
  ImportResult (*import)(ByteSource& src, const std::string& db_path, const ImportOptions& options);
};

// Every importer, in the order they are asked; the first is the default.
const std::vector<const Importer*>& importers();

// What a file holds, judged by its content.
struct Sniffed {
  bool recording = false;              // an SQLite file: read in place (store::Reader judges the rest)
  bool gzipped = false;
  const Importer* importer = nullptr;  // the importer that recognized it, if any
};

// Never throws for a missing, empty or unreadable file (whoever opens it next
// says why); throws Error("<path>: ...") for gzip data that does not inflate.
Sniffed sniff_file(const std::string& path);

// Imports `trace_path` with `importer` into `db_path` through a temporary file
// renamed into place at the end; on any error nothing is left behind and
// Error("<file>: <problem>") is thrown. Refuses an existing output unless
// options.force.
ImportResult import_with(const Importer& importer, const std::string& trace_path, const std::string& db_path,
                         const ImportOptions& options);

// `gpuscope import`: as import_with, with the importer that recognizes the
// input (the default one when none does, so that its parser names the
// problem). Refuses a gpuscope recording: there is nothing to import.
ImportResult import_trace(const std::string& trace_path, const std::string& db_path, const ImportOptions& options);

// "12345 events: 100 kernels, ...; unknown categories: foo 3" for the CLI.
std::string import_summary(const ImportResult& r);

// "dropped 3 of 12345 events: ts out of range 2, negative dur 1" for the CLI's
// last line; empty when nothing was dropped.
std::string import_dropped_line(const ImportResult& r);

}  // namespace gpuscope::formats
