// TensorBoard export: the plugin's file layout, one file per process, each
// with its own rank and only its own events.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "trace_formats/common/error.h"
#include "trace_formats/export/exporters.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::TempDir;

TEST(TensorBoardExport, OneFilePerWorkerInTheRunFolder) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  store::Reader r(tmp.file("s.db"));
  ExportStats st = export_tensorboard(r, tmp.file("logs"), "myrun", {});
  ASSERT_EQ(st.files.size(), 2u);
  // torch-tb-profiler's worker pattern: <worker>.<number>.pt.trace.json[.gz]
  std::regex pattern(R"(^(.*?)\.(\d+)\.pt\.trace\.json(\.gz)?$)");
  std::map<std::string, json> by_worker;
  for (const auto& e : fs::directory_iterator(tmp.file("logs/myrun"))) {
    std::string name = e.path().filename().string();
    std::smatch m;
    ASSERT_TRUE(std::regex_match(name, m, pattern)) << name;
    EXPECT_EQ(m[2], "1717000000000");  // process start, ms since the epoch
    by_worker[m[1]] = json::parse(test::gunzip_file(e.path().string()));
  }
  ASSERT_EQ(by_worker.size(), 2u);
  const json& a = by_worker.at("node-1_cluster_4100");
  const json& b = by_worker.at("node-1_cluster_4200");
  EXPECT_EQ(a["distributedInfo"]["rank"], 0);
  EXPECT_EQ(b["distributedInfo"]["rank"], 1);
  EXPECT_EQ(b["distributedInfo"]["world_size"], 2);
  for (const auto& e : b["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "kernel") {
      EXPECT_EQ(e["pid"], 1);  // pid 4200's kernel ran on device 1
    } else {
      EXPECT_EQ(e["pid"], 4200);
    }
  }
  int a_kernels = 0;
  for (const auto& e : a["traceEvents"]) a_kernels += e.value("cat", "") == "kernel";
  EXPECT_EQ(a_kernels, r.db().query_int("SELECT count(*) FROM kernel WHERE pid = 4100").value_or(-1));
}

TEST(TensorBoardExport, RefusesToOverwriteWithoutForce) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  store::Reader r(tmp.file("s.db"));
  export_tensorboard(r, tmp.file("logs"), "run", {});
  EXPECT_THROW(export_tensorboard(r, tmp.file("logs"), "run", {}), Error);
  ExportOptions force;
  force.force = true;
  EXPECT_NO_THROW(export_tensorboard(r, tmp.file("logs"), "run", force));
  EXPECT_THROW(export_tensorboard(r, tmp.file("logs"), "../escape", {}), Error);
}

}  // namespace
}  // namespace gpuscope::formats
