// After the CTest fixture setup_torch_build ran `gpuscope setup torch --python
// <Debian's python3>` into SETUP_TORCH_CACHE (the suite's one real plugin
// build): the plugin is in place and nothing else is, a second run reuses it
// at once, doctor's probe accepts it, and a torch CPU job recorded with no
// plugin next to the collector gets its ops from the cache.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "cli/doctor/checks.h"
#include "cli/doctor/probes.h"
#include "trace_formats/common/plugin_cache.h"
#include "tests/cli/cli_test_util.h"

namespace gpuscope::cli::test {
namespace {

const std::string kCache = SETUP_TORCH_CACHE;
const std::string kPython = TORCH_PYTHON;

// torch.__version__ of the python the fixture built for.
std::string torch_version() {
  static const std::string v = [] {
    Result r = run(kPython + " -c 'import torch; print(torch.__version__)'");
    return r.output.substr(0, r.output.find('\n'));
  }();
  return v;
}

std::string plugin() { return plugin_cache::torch_plugin_path(kCache, torch_version()); }

TEST(SetupTorchBuilt, ThePluginIsInPlaceAndNothingElse) {
  const std::string first = read_file(kCache + ".out");
  EXPECT_TRUE(first.find("\nbuilt " + plugin() + " in ") != std::string::npos) << first;
  ASSERT_TRUE(fs::exists(plugin())) << first;
  std::vector<std::string> entries;
  for (const auto& e : fs::directory_iterator(kCache + "/torch")) entries.push_back(e.path().filename().string());
  EXPECT_EQ(entries, std::vector<std::string>{plugin_cache::folder_name(torch_version())})
      << "no build folder left, the stale one planted by the fixture removed";
}

TEST(SetupTorchBuilt, ASecondRunReusesItAtOnce) {
  const auto before = fs::last_write_time(plugin());
  const auto start = std::chrono::steady_clock::now();
  Result r = run("GPUSCOPE_CACHE_DIR=" + kCache + " " + bin() + " setup torch --python " + kPython);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "torch " + torch_version() + " (" + kPython + "): reusing " + plugin() +
                          ", built earlier for this torch (--force builds it again)\n");
  EXPECT_LT(took, std::chrono::seconds(30)) << "only `import torch`";
  EXPECT_EQ(fs::last_write_time(plugin()), before);
}

// doctor's own probe, as `gpuscope doctor --python` runs it, with no plugin
// next to the collector: the cache's is the one, and it is for this torch.
TEST(SetupTorchBuilt, DoctorsProbeAcceptsIt) {
  doctor::PluginLookup lookup;
  lookup.cache = kCache;
  lookup.collector_dir = "/nonexistent";
  doctor::PluginProbe plugin;
  const doctor::PythonProbe py = doctor::probe_python(kPython, true, lookup, plugin, 120000);
  EXPECT_EQ(plugin.path, gpuscope::cli::test::plugin());
  const doctor::Check c = doctor::check_torch_plugin(py, plugin, {"/nonexistent/libgpuscope_collector.so", ""});
  EXPECT_EQ(c.status, doctor::Status::kOk) << c.detail << " — " << c.fix;
  EXPECT_TRUE(c.detail.find("(the plugin cache)") != std::string::npos) << c.detail;
}

#ifdef COLLECTOR_PATH
// A collector alone in its folder (as lib/gpuscope/ of the release) loads the
// cache's plugin into a torch CPU job; with an empty cache the job has no ops,
// and one line says what to run.
TEST(SetupTorchBuilt, TheCollectorLoadsItFromTheCache) {
  TempDir dir;
  fs::create_directories(dir.file("lib"));
  fs::copy_file(COLLECTOR_PATH, dir.file("lib/libgpuscope_collector.so"));
  const std::string samples = std::string(GPUSCOPE_SOURCE_DIR) + "/samples/torch";
  std::string said;
  auto ops = [&](const std::string& cache, const std::string& name) {
    Result r = run("cd " + samples + " && GPUSCOPE_COLLECTOR=" + dir.file("lib/libgpuscope_collector.so") +
                   " GPUSCOPE_CACHE_DIR=" + cache + " " + bin() + " record -o " + dir.file(name) + " -- " + kPython +
                   " train_mlp.py --device cpu --steps 8 --warmup 0 --batch 16");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    said = r.output;
    Result n = run(kPython +
                   " -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) "
                   "FROM op\").fetchone()[0])' " +
                   dir.file(name));
    return std::atoi(n.output.c_str());
  };
  EXPECT_GT(ops(kCache, "cached.db"), 100);
  EXPECT_EQ(said.find("torch plugin"), std::string::npos) << said;
  EXPECT_EQ(ops(dir.file("empty_cache"), "none.db"), 0);
  EXPECT_TRUE(said.find("gpuscope: no torch plugin for torch " + torch_version() + " (" + dir.file("empty_cache") +
                        "/torch has none): run `gpuscope setup torch`; recording without torch ops\n") !=
              std::string::npos)
      << said;
}
#endif

}  // namespace
}  // namespace gpuscope::cli::test
