// The settings table (common/settings.h) is the one place a GPUSCOPE_*
// variable is read: the sources are searched for any other read, for names
// that are not in the table, docs/settings.md for a row per setting, and the
// user docs for names that are no setting.
#include "trace_formats/common/settings.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>
#include "tests/support/files.h"
#include "trace_formats/common/steps_window.h"

// The collector's reader, compiled in: unit_test links no collector library,
// and the test below holds it to the table's parser.
#include "collector/config.cpp"  // NOLINT(bugprone-suspicious-include)

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
    EXPECT_GT(shown_default(s).size(), 0u);
    EXPECT_GT(std::string(s.meaning).size(), 10u);
    EXPECT_EQ(std::string(s.meaning).find('\n'), std::string::npos);
    EXPECT_EQ(std::string(s.type).find('|'), std::string::npos) << "a markdown table cell";
  }
  EXPECT_STREQ(name(Id::kControlSteps), "GPUSCOPE_CONTROL_STEPS");
  EXPECT_EQ(shown_default(setting(Id::kControlSteps)), "3,8,200");
  EXPECT_EQ((Entry<Id::kControlSteps>::default_value()), (ControlSteps::Value{3, 8, 200}));
  EXPECT_EQ(record_note(setting(Id::kTorchOpSteps)), "record: auto; record --full: 0");
}

// Setting `id` parsed from `text` (nullptr: unset) equals its default.
template <Id id>
bool reads_as_default(const char* text) {
  return parse<id>(text).value == Entry<id>::default_value();
}

// Every default parses back with its own parser to the same value; a default
// with no spelling is what unset reads as, and says what that means.
template <Id id>
void expect_default_parses_back() {
  const Setting& s = setting(id);
  SCOPED_TRACE(s.name);
  EXPECT_TRUE(reads_as_default<id>(nullptr));
  const std::string text = s.default_text();
  if (text.empty()) {
    if (!std::is_same_v<typename Entry<id>::Type, Presence>) {
      EXPECT_GT(std::string(s.unset).size(), 0u) << "a default without a spelling says what unset means";
    }
    return;
  }
  EXPECT_STREQ(s.unset, "") << "a spelled default needs no unset note";
  EXPECT_TRUE(s.parses(text.c_str())) << text;
  const auto r = parse<id>(text.c_str());
  EXPECT_TRUE(r.warning.empty());
  EXPECT_TRUE(r.value == Entry<id>::default_value()) << text;
  EXPECT_EQ(Entry<id>::Type::format(r.value), text);
  // What record sets parses too.
  for (const char* v : {s.record, s.record_full}) {
    if (v) {
      EXPECT_TRUE(s.parses(v)) << v;
    }
  }
}

TEST(Settings, EveryDefaultParsesWithItsOwnParser) {
#define GPUSCOPE_CHECK_DEFAULT(id, name_, type, default_, unset, record, record_full, meaning) \
  expect_default_parses_back<Id::id>();
  GPUSCOPE_SETTINGS(GPUSCOPE_CHECK_DEFAULT)
#undef GPUSCOPE_CHECK_DEFAULT
}

// A malformed value per type, as docs/settings.md's type table says.
TEST(Settings, AMalformedValueBehavesAsDocumented) {
  // 0 or 1: anything else is the default, silently (both ways round).
  EXPECT_TRUE(parse<Id::kDriverApi>("yes").value);
  EXPECT_TRUE(parse<Id::kDriverApi>("").value);
  EXPECT_FALSE(parse<Id::kDriverApi>("0").value);
  EXPECT_FALSE(parse<Id::kTorchDataLoaderOps>("yes").value);
  EXPECT_TRUE(parse<Id::kTorchDataLoaderOps>("1").value);
  EXPECT_TRUE(parse<Id::kTorchMemory>("").value);
  EXPECT_FALSE(setting(Id::kDriverApi).parses("yes"));
  // 0 or any: any value but 0 turns it on; empty is the default.
  EXPECT_TRUE(parse<Id::kTorchCpuMemory>("yes").value);
  EXPECT_FALSE(parse<Id::kTorchCpuMemory>("").value);
  EXPECT_EQ(parse<Id::kCuptiFinalize>("").value, std::optional<bool>(true));
  EXPECT_EQ(parse<Id::kCuptiFinalize>("0").value, std::optional<bool>(false));
  EXPECT_EQ(parse<Id::kCuptiFinalize>(nullptr).value, std::nullopt);
  // set or unset: even "0" is set.
  EXPECT_TRUE(parse<Id::kDisable>("0").value);
  EXPECT_TRUE(parse<Id::kDisable>("").value);
  // integer: read as strtoull; no digits is 0.
  EXPECT_EQ(parse<Id::kMinFreeMb>("12abc").value, 12u);
  EXPECT_EQ(parse<Id::kMinFreeMb>("abc").value, 0u);
  EXPECT_EQ(parse<Id::kMinFreeMb>("").value, 0u);
  // count: the default.
  EXPECT_EQ(parse<Id::kTorchMemorySteps>("3x").value, 2u);
  EXPECT_EQ(parse<Id::kTorchMemorySteps>("1000000").value, 2u);
  EXPECT_EQ(parse<Id::kTorchMemorySteps>("0").value, 0u);
  // text: empty is the default.
  EXPECT_EQ(parse<Id::kOutput>("").value, "gpuscope_%p.db");
  EXPECT_EQ(parse<Id::kPython>("").value, "/usr/bin/python3");
  // list: unknown names skipped, empty is none.
  const Sources::Value cuda_only{true, false, false, false, false, false};
  EXPECT_EQ(parse<Id::kTrace>("cuda,bogus").value, cuda_only);
  EXPECT_EQ(parse<Id::kTrace>("").value, (Sources::Value{false, false, false, false, false, false}));
  // ms,ms: strtoull; ON 0 is off.
  EXPECT_EQ(parse<Id::kSampleMs>("100,900").value, (MsPair::Value{100, 900}));
  EXPECT_EQ(parse<Id::kSampleMs>("0,900").value, (MsPair::Value{0, 0}));
  EXPECT_EQ(parse<Id::kSampleMs>("x").value, (MsPair::Value{0, 0}));
  // steps: said, and every step.
  const auto steps = parse<Id::kTraceSteps>("9-3");
  EXPECT_EQ(steps.value, StepsWindow::Value{});
  EXPECT_EQ(steps.warning, "GPUSCOPE_TRACE_STEPS=9-3 is not A-B, A- or on-demand (A <= B)");
  EXPECT_FALSE(parse<Id::kTraceSteps>("").warning.empty());
  EXPECT_EQ(parse<Id::kTraceSteps>("on-demand").value.mode, StepsWindow::Mode::kOnDemand);
  EXPECT_EQ(parse<Id::kTraceSteps>("20-").value, (StepsWindow::Value{StepsWindow::Mode::kWindow, 20, UINT64_MAX}));
  // W,N[,MS]: the default, silently; MS left out keeps the default's.
  EXPECT_EQ(parse<Id::kControlSteps>("5").value, (ControlSteps::Value{3, 8, 200}));
  EXPECT_TRUE(parse<Id::kControlSteps>("5").warning.empty());
  EXPECT_EQ(parse<Id::kControlSteps>("1,2").value, (ControlSteps::Value{1, 2, 200}));
  EXPECT_EQ(parse<Id::kControlSteps>("0").value, (ControlSteps::Value{3, 0, 200}));
  // N[/M] or auto: said, and every step; empty is unset, silently.
  const auto op_steps = parse<Id::kTorchOpSteps>("5/2");
  EXPECT_EQ(op_steps.value, OpSteps::Value{});
  EXPECT_NE(op_steps.warning.find("GPUSCOPE_TORCH_OP_STEPS=5/2 is not N or N/M"), std::string::npos);
  EXPECT_TRUE(parse<Id::kTorchOpSteps>("").warning.empty());
  EXPECT_EQ(parse<Id::kTorchOpSteps>("2/50").value, (OpSteps::Value{false, 2, 50}));
  EXPECT_EQ(parse<Id::kTorchOpSteps>("0/50").value, (OpSteps::Value{false, 0, 0}));
  EXPECT_TRUE(parse<Id::kTorchOpSteps>("auto").value.automatic);
  // N=V,...: pairs that are not N=V skipped.
  EXPECT_EQ(parse<Id::kCuptiAttributes>("0=33554432,x,3=4,").value,
            (Attributes::Value{{0u, 33554432u}, {3u, 4u}}));
}

// The steps grammar, which the CLI checks --steps with too (steps_window.h
// reads through it, refusing `all` and `on-demand` there).
TEST(Settings, StepsGrammar) {
  struct Case {
    const char* text;
    bool ok;
    uint64_t first = 0, last = UINT64_MAX;
  };
  for (const Case& c : {Case{"20-29", true, 20, 29}, Case{"5-", true, 5}, Case{"0-0", true, 0, 0}, Case{"3-2", false},
                        Case{"-5", false}, Case{"a-b", false}, Case{"1-2-3", false}, Case{"", false}, Case{"-", false},
                        Case{"1234567890123-", false}, Case{"7", false}}) {
    SCOPED_TRACE(c.text);
    StepsWindow::Value v;
    ASSERT_EQ(StepsWindow::parse(c.text, v), c.ok);
    uint64_t first = 11, last = 12;
    EXPECT_EQ(parse_steps_window(c.text, first, last), c.ok);
    if (c.ok) {
      EXPECT_EQ(v, (StepsWindow::Value{StepsWindow::Mode::kWindow, c.first, c.last}));
      EXPECT_EQ(first, c.first);
      EXPECT_EQ(last, c.last);
    } else {
      EXPECT_EQ(first, 11u) << "untouched";
    }
  }
  uint64_t first = 0, last = 0;
  EXPECT_FALSE(parse_steps_window("all", first, last));
  EXPECT_FALSE(parse_steps_window("on-demand", first, last));
}

// The collector's NVTX injection and plugin loader ask the parsed list by
// name (collector.cpp, plugin_host.cpp), so they agree with load_config.
TEST(Settings, SourcesAreAskedByName) {
  Sources::Value v;
  ASSERT_TRUE(Sources::parse("cuda,torch,memory", v));
  EXPECT_TRUE(v.has("cuda"));
  EXPECT_FALSE(v.has("nvtx"));
  EXPECT_TRUE(v.has("torch"));
  EXPECT_TRUE(v.has("memory"));
  EXPECT_FALSE(v.has("nvml"));
  EXPECT_FALSE(v.has("overhead"));
  EXPECT_FALSE(v.has("tor"));
  ASSERT_TRUE(Sources::parse("cudanvtx", v));
  EXPECT_FALSE(v.has("nvtx")) << "a name inside another is not the source";
  EXPECT_EQ(Sources::format(v), "");
  EXPECT_TRUE(Sources::Value{}.has("nvtx")) << "unset: cuda,nvtx,torch";
  EXPECT_EQ(Sources::format(Sources::Value{}), "cuda,nvtx,torch");
}

// The collector (load_config) and the plugin (settings::read, as plugin_init.cpp
// and memory_reporter.cpp call it) get the table's value for the same environment.
TEST(Settings, CollectorAndPluginReadTheTablesValue) {
  const std::vector<std::vector<std::pair<const char*, const char*>>> environments = {
      {},
      {{"GPUSCOPE_CONTROL_STEPS", "1,4,50"}, {"GPUSCOPE_SAMPLE_MS", "100,900"}, {"GPUSCOPE_MIN_FREE_MB", "7"},
       {"GPUSCOPE_TORCH_OP_STEPS", "2/5"}, {"GPUSCOPE_TORCH_MEMORY_STEPS", "0"}, {"GPUSCOPE_DRIVER_API", "0"},
       {"GPUSCOPE_CUPTI_ATTRIBUTES", "1=2"}, {"GPUSCOPE_TRACE", "cuda,torch,memory"}},
      {{"GPUSCOPE_CONTROL_STEPS", "5"}, {"GPUSCOPE_TRACE_STEPS", "3-9"}, {"GPUSCOPE_TORCH_OP_STEPS", "5/2"},
       {"GPUSCOPE_TORCH_MEMORY_STEPS", "x"}, {"GPUSCOPE_DRIVER_API", "yes"}, {"GPUSCOPE_CUPTI_FINALIZE", "0"},
       {"GPUSCOPE_OUTPUT", ""}, {"GPUSCOPE_TORCH_CPU_MEMORY", "yes"}},
      {{"GPUSCOPE_TRACE_STEPS", "on-demand"}, {"GPUSCOPE_TRACE", ""}, {"GPUSCOPE_CUPTI_FINALIZE", ""}},
  };
  for (const auto& env : environments) {
    for (const Setting& s : kSettings) unsetenv(s.name);
    std::string where;
    for (const auto& [k, v] : env) {
      setenv(k, v, 1);
      where += std::string(k) + "=" + v + " ";
    }
    SCOPED_TRACE(where);
    const collector::Config c = collector::load_config();
    const auto trace = read<Id::kTrace>().value;
    EXPECT_EQ((Sources::Value{c.cuda, c.nvtx, c.torch, c.memory, c.nvml, c.overhead}), trace);
    const auto control = read<Id::kControlSteps>().value;
    EXPECT_EQ(c.control_warmup_steps, control.warmup);
    EXPECT_EQ(c.control_steps, trace.torch ? control.steps : 0);
    EXPECT_EQ(c.control_min_ms, control.min_ms);
    EXPECT_EQ((MsPair::Value{c.sample_on_ms, c.sample_off_ms}), read<Id::kSampleMs>().value);
    EXPECT_EQ(c.min_free_bytes, read<Id::kMinFreeMb>().value << 20);
    EXPECT_EQ(c.driver_api, read<Id::kDriverApi>().value);
    EXPECT_EQ(c.cupti_attributes, read<Id::kCuptiAttributes>().value);
    EXPECT_EQ(c.output, expand_output_name(read<Id::kOutput>().value, getpid()));
    const auto steps = read<Id::kTraceSteps>().value;
    EXPECT_EQ(c.on_demand, steps.mode == StepsWindow::Mode::kOnDemand);
    EXPECT_EQ(c.steps_window, steps.mode == StepsWindow::Mode::kWindow);
    EXPECT_EQ(c.finalize_when_off, read<Id::kCuptiFinalize>().value.value_or(c.switches()));
    // The plugin's reads (plugin_init.cpp, memory_reporter.cpp) are the same
    // calls; what they give for this environment is what the text parses to.
    for (const auto& [k, v] : env) {
      const std::string key = k;
      if (key == "GPUSCOPE_TORCH_OP_STEPS") {
        EXPECT_EQ(read<Id::kTorchOpSteps>().value, parse<Id::kTorchOpSteps>(v).value);
      } else if (key == "GPUSCOPE_TORCH_MEMORY_STEPS") {
        EXPECT_EQ(read<Id::kTorchMemorySteps>().value, parse<Id::kTorchMemorySteps>(v).value);
      } else if (key == "GPUSCOPE_TORCH_CPU_MEMORY") {
        EXPECT_TRUE(read<Id::kTorchCpuMemory>().value);
      }
    }
  }
  for (const Setting& s : kSettings) unsetenv(s.name);
  // A default collector config is the table's defaults.
  const collector::Config c = collector::load_config();
  const collector::Config plain;
  EXPECT_EQ(c.control_steps, plain.control_steps);
  EXPECT_EQ(c.min_free_bytes, plain.min_free_bytes);
  EXPECT_EQ(c.cuda, plain.cuda);
  EXPECT_EQ(c.memory, plain.memory);
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

// The page's rows are the table's (doc_row), defaults included, in its order.
TEST(Settings, SettingsPageShowsEverySettingAsTheCodeHasIt) {
  const std::string page = read_file(kRoot + "/docs/settings.md");
  ASSERT_FALSE(page.empty());
  std::string expected;
  for (const Setting& s : kSettings) {
    EXPECT_NE(page.find(std::string("| `") + s.name + "` |"), std::string::npos) << s.name << " has no row in docs/settings.md";
    expected += doc_row(s) + "\n";
  }
  const std::string header = "| variable | type | default | under record | meaning |\n|---|---|---|---|---|\n";
  const size_t at = page.find(header);
  ASSERT_NE(at, std::string::npos) << "docs/settings.md has no settings table";
  const std::string rows = page.substr(at + header.size(), expected.size());
  EXPECT_EQ(rows, expected) << "docs/settings.md's table differs from trace_formats/common/settings.h; its rows are:\n"
                            << expected;
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
