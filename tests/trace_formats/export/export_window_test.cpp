// `export --steps analysed`: the window's rows only, a note naming it, and the
// stretches gpuscope did not trace marked on its own row, in the Chrome and
// the Perfetto export; the CLI takes the window from analyze.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "trace_formats/export/exporters.h"
#include "perfetto_trace.pb.h"
#include "trace_formats/store/reader.h"
#include "tests/analyzer/recorded_data.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace fs = std::filesystem;

// A recording with a control stretch: traced, untraced, traced.
std::string sampled_recording() {
  return testing::readable_recording(fs::path(GPUSCOPE_SOURCE_DIR) / "tests/data/models_healthy.db.zst");
}

ExportOptions::Window window(int64_t lo, int64_t hi) {
  ExportOptions::Window w;
  w.start = lo;
  w.end = hi;
  w.note = "analysed steps 15-17";
  return w;
}

struct Seen {
  int outside = 0, inside = 0, notes = 0, untraced = 0;
};

Seen chrome_events(const std::string& path, int64_t lo_ns, int64_t hi_ns) {
  const nlohmann::json doc = nlohmann::json::parse(test::read_file(path));
  Seen s;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e.value("ph", ""), cat = e.value("cat", "");
    if (cat == "gpuscope") {
      const std::string name = e.value("name", "");
      if (name.rfind("gpuscope: analysed steps", 0) == 0) ++s.notes;
      if (name.rfind("gpuscope: untraced (", 0) == 0) ++s.untraced;
      continue;
    }
    if (ph != "X") continue;
    const double start = e["ts"].get<double>() * 1000, end = start + e["dur"].get<double>() * 1000;
    if (end < double(lo_ns) - 1 || start > double(hi_ns) + 1) ++s.outside;
    else ++s.inside;
  }
  return s;
}

TEST(ExportWindow, ChromeHoldsTheWindowAndNamesIt) {
  test::TempDir tmp;
  store::Reader r(sampled_recording());
  const int64_t lo = *r.db().query_int("SELECT start FROM step ORDER BY start LIMIT 1 OFFSET 15");
  const int64_t hi = *r.db().query_int("SELECT \"end\" FROM step ORDER BY start LIMIT 1 OFFSET 17");
  ExportOptions opt;
  opt.window = window(lo, hi);
  export_chrome(r, tmp.file("w.json"), opt);
  Seen w = chrome_events(tmp.file("w.json"), lo, hi);
  EXPECT_EQ(w.outside, 0);
  EXPECT_GT(w.inside, 100);
  EXPECT_EQ(w.notes, 1);
  // The whole recording: its untraced stretch (between two traced ones) marked.
  export_chrome(r, tmp.file("all.json"), {});
  Seen all = chrome_events(tmp.file("all.json"), lo, hi);
  EXPECT_GT(all.outside, 1000);
  EXPECT_EQ(all.notes, 0);
  EXPECT_EQ(all.untraced, 1);
  // The reader reads the whole tables again afterwards.
  EXPECT_GT(r.count("kernel"), 400);
}

TEST(ExportWindow, PerfettoHoldsTheWindowAndNamesIt) {
  test::TempDir tmp;
  store::Reader r(sampled_recording());
  const int64_t lo = *r.db().query_int("SELECT start FROM step ORDER BY start LIMIT 1 OFFSET 15");
  const int64_t hi = *r.db().query_int("SELECT \"end\" FROM step ORDER BY start LIMIT 1 OFFSET 17");
  for (uint64_t in_memory : {uint64_t{1} << 30, uint64_t{0}}) {  // both sort paths
    ExportOptions opt;
    opt.window = window(lo, hi);
    opt.perfetto_rows_in_memory = in_memory;
    const std::string out = tmp.file("w" + std::to_string(in_memory) + ".pftrace");
    export_perfetto(r, out, opt);
    perfetto::protos::Trace trace;
    ASSERT_TRUE(trace.ParseFromString(test::read_file(out)));
    int64_t now = 0;
    int notes = 0, kernels = 0, outside = 0;
    std::map<uint64_t, std::string> names, categories;
    std::map<uint64_t, std::vector<std::pair<int64_t, bool>>> open;  // by track: start, is a kernel
    for (int i = 0; i < trace.packet_size(); ++i) {
      const auto& p = trace.packet(i);
      if (i > 0) now += static_cast<int64_t>(p.timestamp());
      for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
      for (const auto& c : p.interned_data().event_categories()) categories[c.iid()] = c.name();
      if (!p.has_track_event()) continue;
      const auto& te = p.track_event();
      if (te.type() == perfetto::protos::TrackEvent::TYPE_INSTANT &&
          names[te.name_iid()] == "gpuscope: analysed steps 15-17")
        ++notes;
      if (te.type() == perfetto::protos::TrackEvent::TYPE_SLICE_BEGIN)
        open[te.track_uuid()].push_back({now, categories[te.category_iids(0)] == "kernel"});
      if (te.type() == perfetto::protos::TrackEvent::TYPE_SLICE_END) {
        auto [start, kernel] = open[te.track_uuid()].back();
        open[te.track_uuid()].pop_back();
        if (!kernel) continue;
        ++kernels;
        if (now < lo || start > hi) ++outside;
      }
    }
    EXPECT_EQ(notes, 1);
    EXPECT_GT(kernels, 10);
    EXPECT_EQ(outside, 0);
  }
}

TEST(ExportWindow, CliExportsTheAnalysedStepsAndRefusesOtherValues) {
  test::TempDir tmp;
  const std::string db = sampled_recording();
  test::RunResult ok = test::run(test::gpuscope_bin() + " export '" + db + "' --chrome '" + tmp.file("a.json") +
                                 "' --steps analysed");
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("gpuscope: exporting analysed steps 15-18 (4 of 19 steps)"), std::string::npos)
      << ok.output;
  // Its ProfilerStep#N ranges are analyze's four steps, bounded as analyze bounds them.
  const nlohmann::json doc = nlohmann::json::parse(test::read_file(tmp.file("a.json")));
  std::vector<std::string> steps;
  for (const auto& e : doc["traceEvents"])
    if (e.value("name", "").rfind("ProfilerStep#", 0) == 0) steps.push_back(e["name"]);
  EXPECT_EQ(steps, (std::vector<std::string>{"ProfilerStep#15", "ProfilerStep#16", "ProfilerStep#17",
                                             "ProfilerStep#18"}));
  test::RunResult bad = test::run(test::gpuscope_bin() + " export '" + db + "' --chrome '" + tmp.file("b.json") +
                                  "' --steps some");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_EQ(bad.output, "gpuscope: error: export: --steps takes 'analysed' or 'all', not 'some'\n");
  EXPECT_FALSE(fs::exists(tmp.file("b.json")));
}

}  // namespace
}  // namespace gpuscope::formats
