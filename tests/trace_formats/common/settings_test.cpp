// The settings table (common/settings.h) is the one place a GPUSCOPE_*
// variable is read: the sources are searched for any other read, for names
// that are not in the table, docs/settings.md for a row per setting, and the
// user docs for names that are no setting.
#include "common/settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include "tests/support/files.h"

namespace gpuscope::settings {
namespace {

namespace fs = std::filesystem;

const std::string kRoot = GPUSCOPE_SOURCE_DIR;
const std::string kTable = "trace_formats/common/settings.h";

// Folders of the product (the collector, the plugin, the CLI, the offline
// libraries and the viewer); bench/ and tests/ keep their own switches.
const char* const kFolders[] = {"collector", "cli", "plugins", "trace_formats", "analyzer", "regress", "merge", "cluster", "gui"};

// getenv with a variable name, not a literal: only where the name is not ours
// to know (RANK and the like; %q{VAR} of output names; the viewer's display check).
const std::set<std::string> kComputedGetenv = {"collector/process_info.cpp", "trace_formats/common/output_name.cpp",
                                               "gui/app/main.cpp"};

using test_support::read_file;

struct Line {
  std::string file;  // relative to the source root
  int number;
  std::string text;
};

std::vector<Line> source_lines() {
  std::vector<Line> lines;
  for (const char* folder : kFolders) {
    for (const auto& e : fs::recursive_directory_iterator(kRoot + "/" + folder)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cc" && ext != ".hpp")) continue;
      const std::string rel = fs::relative(e.path(), kRoot).string();
      std::istringstream in(read_file(e.path().string()));
      std::string text;
      for (int n = 1; std::getline(in, text); ++n) lines.push_back({rel, n, text});
    }
  }
  return lines;
}

bool known(const std::string& name) {
  for (const Setting& s : kSettings)
    if (name == s.name) return true;
  return false;
}

TEST(Settings, TheTableIsWellFormed) {
  std::set<std::string> names;
  for (size_t i = 0; i < kCount; ++i) {
    const Setting& s = kSettings[i];
    SCOPED_TRACE(s.name);
    EXPECT_EQ(static_cast<size_t>(s.id), i);
    EXPECT_EQ(std::string(s.name).rfind("GPUSCOPE_", 0), 0u);
    EXPECT_TRUE(std::regex_match(s.name, std::regex("GPUSCOPE_[A-Z0-9_]+")));
    EXPECT_TRUE(names.insert(s.name).second) << "twice";
    EXPECT_GT(std::string(s.default_value).size(), 0u);
    EXPECT_GT(std::string(s.meaning).size(), 10u);
    EXPECT_EQ(std::string(s.meaning).find('\n'), std::string::npos);
  }
  EXPECT_STREQ(name(Id::kControlSteps), "GPUSCOPE_CONTROL_STEPS");
  EXPECT_STREQ(setting(Id::kControlSteps).default_value, "3,8,200");
}

TEST(Settings, ReadersKeepTheirMeaning) {
  setenv("GPUSCOPE_DRIVER_API", "0", 1);
  setenv("GPUSCOPE_TORCH_MEMORY", "", 1);
  setenv("GPUSCOPE_ORIGIN_NS", "123", 1);
  unsetenv("GPUSCOPE_TORCH_CPU_MEMORY");
  EXPECT_TRUE(equals(Id::kDriverApi, "0"));
  EXPECT_TRUE(is_set(Id::kTorchMemory));
  EXPECT_EQ(text(Id::kTorchMemory), nullptr) << "empty reads as unset for text()";
  EXPECT_TRUE(flag(Id::kTorchMemory, true)) << "empty: the default";
  EXPECT_FALSE(flag(Id::kTorchCpuMemory, false));
  EXPECT_EQ(u64(Id::kOriginNs), 123u);
  setenv("GPUSCOPE_TORCH_MEMORY", "0", 1);
  EXPECT_FALSE(flag(Id::kTorchMemory, true));
  for (const char* v : {"GPUSCOPE_DRIVER_API", "GPUSCOPE_TORCH_MEMORY", "GPUSCOPE_ORIGIN_NS"}) unsetenv(v);
  EXPECT_FALSE(is_set(Id::kDriverApi));
  EXPECT_EQ(u64(Id::kOriginNs), 0u);
}

// A test that cannot fail is a defect: the search must see the table's own reads.
TEST(Settings, TheSearchSeesTheTable) {
  int reads = 0;
  for (const Line& l : source_lines())
    if (l.file == kTable && l.text.find("std::getenv(") != std::string::npos) ++reads;
  EXPECT_EQ(reads, 1);
}

TEST(Settings, NoGpuscopeVariableIsReadOutsideTheTable) {
  const std::regex literal_read(R"(getenv\s*\(\s*"GPUSCOPE_)");
  const std::regex computed_read(R"(getenv\s*\(\s*[^")\s])");
  for (const Line& l : source_lines()) {
    if (l.file == kTable) continue;
    EXPECT_FALSE(std::regex_search(l.text, literal_read))
        << l.file << ":" << l.number << ": reads a GPUSCOPE_ variable; add it to " << kTable
        << " and read it through settings::\n  " << l.text;
    if (!kComputedGetenv.count(l.file)) {
      EXPECT_FALSE(std::regex_search(l.text, computed_read))
          << l.file << ":" << l.number << ": getenv of a computed name; read settings through " << kTable << "\n  "
          << l.text;
    }
  }
}

TEST(Settings, EveryQuotedGpuscopeNameIsASetting) {
  const std::regex literal(R"("(?:[^"\\]|\\.)*")");
  const std::regex token(R"((-D)?GPUSCOPE_[A-Z0-9_]+)");
  for (const Line& l : source_lines()) {
    for (std::sregex_iterator m(l.text.begin(), l.text.end(), literal), end; m != end; ++m) {
      const std::string lit = m->str();
      for (std::sregex_iterator t(lit.begin(), lit.end(), token); t != end; ++t) {
        if ((*t)[1].matched) continue;  // a CMake option (-DGPUSCOPE_WITH_GUI=ON)
        EXPECT_TRUE(known(t->str())) << l.file << ":" << l.number << ": " << t->str()
                                     << " is not in the settings table (" << kTable << ")\n  " << l.text;
      }
    }
  }
}

TEST(Settings, SettingsPageHasARowForEverySetting) {
  const std::string page = read_file(kRoot + "/docs/settings.md");
  ASSERT_FALSE(page.empty());
  for (const Setting& s : kSettings)
    EXPECT_NE(page.find(std::string("| `") + s.name + "` |"), std::string::npos) << s.name << " has no row in docs/settings.md";
}

TEST(Settings, UserDocsNameNoOtherSetting) {
  const std::regex token(R"((-D)?(GPUSCOPE_[A-Z0-9_]+))");
  for (const char* doc : {"/README.md", "/docs/settings.md", "/docs/recording.md", "/docs/install.md"}) {
    const std::string text = read_file(kRoot + doc);
    ASSERT_FALSE(text.empty()) << doc;
    for (std::sregex_iterator t(text.begin(), text.end(), token), end; t != end; ++t) {
      if ((*t)[1].matched) continue;  // a CMake option
      EXPECT_TRUE(known((*t)[2].str())) << doc << " names " << (*t)[2].str() << ", no setting";
    }
  }
}

}  // namespace
}  // namespace gpuscope::settings
