// The importer list and open_recording(): formats are told by content, never
// by name; a trace opens as a temporary recording that is gone afterwards.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "trace_formats/common/error.h"
#include "trace_formats/import/importer.h"
#include "trace_formats/import/open_recording.h"
#include "trace_formats/import/torch_import.h"
#include "trace_formats/store/reader.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string kSmall = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/import/kineto_small.json";
const std::string kGz = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/torch113_cpu_mlp.json.gz";
const std::string kRecording = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/data/nvtx_loop.db";

// TMPDIR pointed at a fresh folder for one test, so that what the test leaves
// there can be listed.
class ScopedTmpdir {
 public:
  ScopedTmpdir() {
    const char* old = std::getenv("TMPDIR");
    if (old) old_ = old, had_ = true;
    fs::create_directories(dir_.path() + "/tmp");
    setenv("TMPDIR", (dir_.path() + "/tmp").c_str(), 1);
  }
  ~ScopedTmpdir() {
    if (had_) setenv("TMPDIR", old_.c_str(), 1);
    else unsetenv("TMPDIR");
  }
  std::string path() const { return dir_.path() + "/tmp"; }
  std::vector<std::string> left() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path())) names.push_back(e.path().filename().string());
    return names;
  }

 private:
  TempDir dir_;
  std::string old_;
  bool had_ = false;
};

TEST(Importers, TheListHasTheTorchProfilerImporterFirst) {
  ASSERT_FALSE(importers().empty());
  EXPECT_STREQ(importers().front()->name, "torch.profiler");
  for (const Importer* i : importers()) {
    EXPECT_NE(i->sniff, nullptr) << i->name;
    EXPECT_NE(i->import, nullptr) << i->name;
    EXPECT_GT(std::string(i->what).size(), 10u) << i->name;
  }
}

TEST(Importers, FilesAreToldByContentNotByName) {
  TempDir tmp;
  // A recording named like a trace, a trace named like a recording.
  fs::copy_file(kRecording, tmp.file("looks_like.json.gz"));
  fs::copy_file(kGz, tmp.file("really_a_trace.db"));
  test::write_file(tmp.file("bom.txt"), "\xef\xbb\xbf \n\t[{\"ph\": \"X\"}]");
  test::write_file(tmp.file("text.json"), "this is not json\n");
  test::write_file(tmp.file("empty.json"), "");

  Sniffed s = sniff_file(tmp.file("looks_like.json.gz"));
  EXPECT_TRUE(s.recording);
  EXPECT_EQ(s.importer, nullptr);

  s = sniff_file(tmp.file("really_a_trace.db"));
  EXPECT_FALSE(s.recording);
  EXPECT_TRUE(s.gzipped);
  ASSERT_NE(s.importer, nullptr);
  EXPECT_STREQ(s.importer->name, "torch.profiler");

  s = sniff_file(kSmall);
  EXPECT_FALSE(s.gzipped);
  EXPECT_EQ(s.importer, &torch_profiler_importer());
  EXPECT_EQ(sniff_file(tmp.file("bom.txt")).importer, &torch_profiler_importer());

  for (const char* name : {"text.json", "empty.json", "missing.json"}) {
    SCOPED_TRACE(name);
    s = sniff_file(tmp.file(name));
    EXPECT_FALSE(s.recording);
    EXPECT_EQ(s.importer, nullptr);
  }
  EXPECT_EQ(sniff_file(tmp.path()).importer, nullptr) << "a folder";
}

TEST(Importers, GzipThatDoesNotInflateIsNamed) {
  TempDir tmp;
  test::write_file(tmp.file("garbage.gz"), std::string("\x1f\x8b\x08\x00", 4) + std::string(64, 'x'));
  try {
    sniff_file(tmp.file("garbage.gz"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.gz: "), std::string::npos) << e.what();
  }
}

TEST(Importers, ImportTraceRefusesARecording) {
  TempDir tmp;
  try {
    import_trace(kRecording, tmp.file("out.db"), {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nvtx_loop.db: already an SQLite database"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp.file("out.db")));
  // A gzipped trace under any name imports.
  fs::copy_file(kGz, tmp.file("trace.bin"));
  ImportResult r = import_trace(tmp.file("trace.bin"), tmp.file("out.db"), {});
  EXPECT_GT(r.counts.ops, 0);
  store::Reader reader(tmp.file("out.db"));
  EXPECT_EQ(reader.meta("source"), "torch.profiler import");
}

TEST(Importers, ARecordingOpensInPlace) {
  ScopedTmpdir tmpdir;
  OpenedRecording r = open_recording(kRecording);
  EXPECT_FALSE(r.imported());
  EXPECT_EQ(r.importer(), nullptr);
  EXPECT_EQ(r.path(), kRecording);
  EXPECT_EQ(r.input(), kRecording);
  EXPECT_TRUE(tmpdir.left().empty());
  // Not a trace and not a recording: handed on for store::Reader to refuse.
  OpenedRecording missing = open_recording("/nonexistent/x.json");
  EXPECT_EQ(missing.path(), "/nonexistent/x.json");
}

TEST(Importers, ATraceOpensAsATemporaryRecordingThatGoesWithIt) {
  ScopedTmpdir tmpdir;
  std::string db;
  {
    OpenedRecording r = open_recording(kGz);
    EXPECT_TRUE(r.imported());
    EXPECT_EQ(r.importer(), &torch_profiler_importer());
    EXPECT_EQ(r.input(), kGz);
    db = r.path();
    EXPECT_EQ(fs::path(db).parent_path(), fs::path(tmpdir.path()));
    store::Reader reader(db);
    EXPECT_EQ(reader.meta("source"), "torch.profiler import");
    EXPECT_GT(reader.count("op"), 0);
    // Moved, it is still one recording, removed once.
    OpenedRecording moved = std::move(r);
    EXPECT_EQ(moved.path(), db);
    EXPECT_TRUE(fs::exists(db));
    EXPECT_EQ(moved.name_input("x " + db + ": y"), "x " + kGz + ": y");
  }
  EXPECT_FALSE(fs::exists(db));
  EXPECT_TRUE(tmpdir.left().empty());
}

TEST(Importers, ATraceThatDoesNotImportIsNamedAndLeavesNothing) {
  ScopedTmpdir tmpdir;
  TempDir tmp;
  const std::string gz = test::read_file(kGz);
  test::write_file(tmp.file("cut.json.gz"), gz.substr(0, gz.size() / 2));
  test::write_file(tmp.file("shape.json"), R"({"name": "a config file", "values": [1, 2, 3]})");
  for (const char* name : {"cut.json.gz", "shape.json"}) {
    SCOPED_TRACE(name);
    try {
      open_recording(tmp.file(name));
      FAIL() << "no error";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(tmp.file(name) + ": ", 0), 0u) << what;
      EXPECT_EQ(what.find(tmpdir.path()), std::string::npos) << what;
    }
    EXPECT_TRUE(tmpdir.left().empty());
  }
}

}  // namespace
}  // namespace gpuscope::formats
