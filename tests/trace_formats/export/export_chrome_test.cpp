// Chrome trace export: strict JSON for any bytes in names, torch.profiler's
// categories and argument names, flows, metadata, and a golden file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "trace_formats/export/exporters.h"
#include "tests/trace_formats/formats_test_util.h"
#include "tests/support/golden.h"

namespace gpuscope::formats {
namespace {

using nlohmann::json;
using test::TempDir;

json export_and_parse(const std::string& db, const std::string& out, std::string* text = nullptr) {
  store::Reader r(db);
  ExportOptions opt;
  export_chrome(r, out, opt);
  std::string data = out.size() > 3 && out.substr(out.size() - 3) == ".gz" ? test::gunzip_file(out)
                                                                           : test::read_file(out);
  if (text) *text = data;
  // nlohmann's parser is strict: it rejects invalid UTF-8, raw control bytes and trailing commas.
  return json::parse(data);
}

TEST(ChromeExport, StrictJsonWithKinetoCategoriesAndArgs) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  std::string text;
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("s.json"), &text);

  // HTA reads the rank with "rank":\s+(\d+).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("\"rank\":\\s+(\\d+)")));
  EXPECT_EQ(m[1], "0");
  EXPECT_EQ(doc["distributedInfo"]["world_size"], 2);
  EXPECT_EQ(doc["deviceProperties"].size(), 2u);
  EXPECT_EQ(doc["deviceProperties"][1]["id"], 1);
  EXPECT_EQ(doc["deviceProperties"][0]["numSms"], 132);
  EXPECT_EQ(doc["baseTimeNanoseconds"], 1717000000000000000);

  std::set<std::string> cats;
  std::map<std::string, int> by_cat;
  std::map<int64_t, int> flow_starts, flow_ends;
  std::set<std::string> process_names;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("name")) << e;  // TensorBoard reads every event's name
    std::string ph = e["ph"];
    if (ph == "X") {
      for (const char* k : {"ts", "dur", "pid", "tid", "cat"}) ASSERT_TRUE(e.contains(k)) << k << " in " << e;
      std::string cat = e["cat"];
      ++by_cat[cat];
      bool gpu = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "gpu_user_annotation";
      // HTA tells GPU events from CPU ones by the stream argument.
      EXPECT_EQ(e["args"].contains("stream"), gpu || cat == "cuda_sync") << e;
      if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
        EXPECT_TRUE(e["args"].contains("correlation"));
      }
    }
    if (ph == "s") ++flow_starts[e["id"]];
    if (ph == "f") {
      ++flow_ends[e["id"]];
      EXPECT_EQ(e["bp"], "e");
      EXPECT_EQ(e["cat"], "ac2g");
    }
    if (ph == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"]);
  }
  for (const char* c : {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cpu_op",
                        "user_annotation", "gpu_user_annotation", "cuda_sync"})
    EXPECT_GT(by_cat[c], 0) << c;
  EXPECT_EQ(process_names, (std::set<std::string>{"python3", "GPU 0", "GPU 1"}));
  // One arrow start per launching call, one end per GPU activity it caused
  // (a graph launch has two); ids stay unique across processes.
  EXPECT_EQ(flow_starts.size(), 2u * 5 + 1);
  int graph_ends = 0;
  for (const auto& [id, n] : flow_starts) {
    EXPECT_EQ(n, 1) << id;
    ASSERT_TRUE(flow_ends.count(id)) << id;
    graph_ends += flow_ends[id] == 2;
  }
  EXPECT_EQ(flow_ends.size(), flow_starts.size());
  EXPECT_EQ(graph_ends, 2);
}

TEST(ChromeExport, ArgumentsAsTorchProfilerNamesThem) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("s.json"));
  bool kernel = false, memcpy = false, op = false, bad_shape = false, memory = false, counter = false;
  for (const auto& e : doc["traceEvents"]) {
    const json& a = e.value("args", json::object());
    if (e.value("cat", "") == "kernel" && e["name"] == "ampere_sgemm_128x64_tn" && e["pid"] == 0) {
      kernel = true;
      for (const char* k : {"External id", "device", "context", "stream", "correlation", "registers per thread",
                            "shared memory", "grid", "block", "blocks per SM", "warps per SM"})
        EXPECT_TRUE(a.contains(k)) << k;
      EXPECT_EQ(a["shared memory"], 1024 + 16384);
      EXPECT_EQ(a["grid"], json::array({17, 1, 1}));
      EXPECT_EQ(e["tid"], 13);
    }
    if (e.value("cat", "") == "gpu_memcpy" && e["name"] == "Memcpy HtoD (Pageable -> Device)") {
      memcpy = true;
      EXPECT_EQ(a["bytes"], 65536);
      EXPECT_NEAR(a["memory bandwidth (GB/s)"].get<double>(), 65536.0 / 5000.0, 1e-9);
    }
    if (e.value("cat", "") == "cpu_op" && e["name"] == "aten::linear") {
      op = true;
      EXPECT_EQ(a["Input Dims"], json::parse("[[64,256],[256,256],[256]]"));
      EXPECT_EQ(a["Input type"], json::parse(R"(["float","float","float"])"));
      EXPECT_TRUE(a.contains("External id"));
      EXPECT_TRUE(a.contains("Sequence number"));
    }
    if (e.value("cat", "") == "cpu_op" && a.contains("Input Dims") && a["Input Dims"].is_string()) {
      bad_shape = true;  // stored text that is not JSON stays a string
      EXPECT_EQ(a["Input Dims"], "[[64,");
    }
    if (e["name"] == "[memory]") {
      memory = true;
      EXPECT_EQ(e["ph"], "i");
      for (const char* k : {"Device Type", "Device Id", "Addr", "Bytes", "Total Allocated", "Total Reserved"})
        EXPECT_TRUE(a.contains(k)) << k;
    }
    if (e["ph"] == "C" && e["name"] == "gpu_memory_used") {
      counter = true;
      EXPECT_EQ(e["pid"], 0);  // on the GPU's row
    }
  }
  EXPECT_TRUE(kernel && memcpy && op && bad_shape && memory && counter);
}

TEST(ChromeExport, AnyBytesInNamesGiveValidUtf8) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("s.json.gz"));
  std::set<std::string> names;
  for (const auto& e : doc["traceEvents"]) names.insert(e["name"].get<std::string>());
  // Quotes, backslashes and control bytes survive; invalid sequences become U+FFFD.
  EXPECT_TRUE(names.count("void k<\"q\">(\\path)\t\x01\x7f \xef\xbf\xbd\xef\xbf\xbd \xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd"))
      << "weird kernel name not found";
  bool op = false;
  for (const auto& n : names)
    if (n.rfind("op \"quoted\" \\back\\ \n newline \x1f ", 0) == 0) {
      op = true;
      EXPECT_NE(n.find("\xf0\x9f\x98\x80 ok"), std::string::npos);
      EXPECT_EQ(n.find("\xed\xa0\x80"), std::string::npos);  // the surrogate is gone
    }
  EXPECT_TRUE(op);
}

TEST(ChromeExport, StepsWithoutRangesBecomeProfilerSteps) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("s.json"));
  int steps = 0;
  for (const auto& e : doc["traceEvents"])
    if (e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) {
      ++steps;
      EXPECT_EQ(e["cat"], "user_annotation");
      EXPECT_EQ(e["args"]["step source"], "optimizer_step");
    }
  EXPECT_EQ(steps, 3);  // two on pid 4100, one on pid 4200
}

// External ids and flows come from a correlation map loaded once, not from
// joins: row order must not matter (ids negated run against time), and
// correlation 0 and NULL must match as the joins did (0 = 0 finds an external
// id but starts no arrow; NULL matches nothing).
TEST(ChromeExport, CorrelationsIndependentOfRowOrder) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  auto events = [&](const std::string& out) {
    std::multiset<std::string> set;
    json doc = export_and_parse(tmp.file("s.db"), out);
    for (const auto& e : doc["traceEvents"]) set.insert(e.dump());
    return set;
  };
  auto before = events(tmp.file("a.json"));
  {
    store::Connection c(tmp.file("s.db"), store::Connection::Mode::kReadWrite);
    for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "memory_event"})
      c.exec("UPDATE " + std::string(t) + " SET id = -id");
  }
  EXPECT_EQ(before, events(tmp.file("b.json")));

  {
    store::Connection c(tmp.file("s.db"), store::Connection::Mode::kReadWrite);
    c.exec("INSERT INTO external_correlation(pid, correlation, external_id) VALUES (4100, 0, 777)");
    for (const char* corr : {"0", "NULL"})
      c.exec("INSERT INTO api_call(pid, tid, domain, cbid, name_id, start, \"end\", correlation, return_code) "
             "SELECT pid, tid, domain, cbid, name_id, start, \"end\", " + std::string(corr) +
             ", 0 FROM api_call WHERE pid = 4100 LIMIT 1");
    c.exec("INSERT INTO kernel SELECT NULL, pid, device, context, stream, 0, start, \"end\", name_id, grid_x, grid_y, "
           "grid_z, block_x, block_y, block_z, registers, static_smem, dynamic_smem, graph_id, graph_node_id "
           "FROM kernel WHERE pid = 4100 LIMIT 1");
  }
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("c.json"));
  auto flows = [](const auto& dumps) {
    size_t n = 0;
    for (const std::string& d : dumps) n += d.find("\"ac2g\"") != std::string::npos;
    return n;
  };
  std::vector<std::string> after;
  for (const auto& e : doc["traceEvents"]) after.push_back(e.dump());
  EXPECT_EQ(flows(after), flows(before));  // the new rows start and end no arrow
  EXPECT_GT(flows(before), 0u);
  int zero = 0, null = 0, kernel_zero = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const json& a = e["args"];
    if (e["cat"] == "kernel" && a["correlation"] == 0) {
      ++kernel_zero;
      EXPECT_EQ(a["External id"], 777);
    }
    if (e["cat"] != "cuda_runtime" && e["cat"] != "cuda_driver") continue;
    if (a["correlation"] != 0) continue;
    // The NULL correlation is written as 0 too: tell the two by the external id.
    if (a.contains("External id")) {
      ++zero;
      EXPECT_EQ(a["External id"], 777);
    } else {
      ++null;
    }
  }
  EXPECT_EQ(zero, 1);
  EXPECT_EQ(null, 1);
  EXPECT_EQ(kernel_zero, 1);
}

// An imported trace may carry any int64 as a device or process id; the sort
// index of a GPU's process row is held at INT64_MAX, not wrapped negative.
TEST(ChromeExport, IdsNearTheInt64LimitsKeepTheirOrder) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  {
    store::Connection c(tmp.file("s.db"), store::Connection::Mode::kReadWrite);
    for (const char* t : {"kernel", "memcpy", "memset"})
      c.exec("UPDATE " + std::string(t) + " SET device = 9223372036854775806 WHERE device = 1");
    c.exec("UPDATE device SET id = 9223372036854775806 WHERE id = 1");
  }
  json doc = export_and_parse(tmp.file("s.db"), tmp.file("a.json"));
  int gpu_rows = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M" || e["name"] != "process_sort_index") continue;
    const json& index = e["args"]["sort_index"];
    ASSERT_TRUE(index.is_number_integer()) << e.dump();
    EXPECT_GE(index.get<int64_t>(), 0) << e.dump();
    gpu_rows += index.get<int64_t>() >= 0x1000000;
  }
  EXPECT_GE(gpu_rows, 2);
}

TEST(ChromeExport, MatchesGolden) {
  TempDir tmp;
  test::SyntheticOptions small;
  small.steps = 1;
  small.second_process = false;
  test::make_synthetic_db(tmp.file("g.db"), small);
  std::string text;
  export_and_parse(tmp.file("g.db"), tmp.file("g.json"), &text);
  // The trace name holds the temporary path's file name only.
  std::string diff = test_support::golden_mismatch(
      std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/export/golden/synthetic.chrome.json", text);
  EXPECT_TRUE(diff.empty()) << diff;
}

TEST(ChromeExport, RealRecordingsGiveStrictJson) {
  for (const auto& db : test::data_files(".db")) {
    TempDir tmp;
    SCOPED_TRACE(db);
    json doc;
    ASSERT_NO_THROW(doc = export_and_parse(db, tmp.file("r.json")));
    EXPECT_TRUE(doc["traceEvents"].is_array());
  }
}

}  // namespace
}  // namespace gpuscope::formats
