// Chrome export as TensorBoard's profiler plugin builds its operator tree:
// per thread, the host events sorted by start (longer first) must nest or
// follow one another, both with the times as parsed (end = ts + dur in
// doubles) and with start and end rounded to whole microseconds. An event
// that starts inside another and ends after it is dropped from the tree with
// "ranges on the same thread should not intersect".
// And as HTA's default JSON backend reads them (trace_parser.py: ts rounded up,
// ts + dur down to whole microseconds): no event, host or GPU, may end before
// it starts; those the export moved for it (trace_formats/export/hta_fit.h)
// lie within a microsecond of their recorded times ("recorded ts", "recorded
// dur").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace_formats/export/exporters.h"
#include "trace_formats/store/reader.h"
#include "tests/analyzer/recorded_data.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

struct Range {
  double start, end;
  std::string name;
};

bool host_category(const std::string& cat) {
  return cat == "cpu_op" || cat == "user_annotation" || cat == "python_function" || cat == "cuda_runtime" ||
         cat == "cuda_driver";
}

// TensorBoard's tree builder on one thread's ranges; returns the intersections.
std::vector<std::string> intersections(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
  std::vector<const Range*> stack;
  std::vector<std::string> bad;
  for (const Range& r : ranges) {
    while (!stack.empty() && !(r.start < stack.back()->end)) stack.pop_back();
    if (stack.empty() || r.end <= stack.back()->end) {
      stack.push_back(&r);
      continue;
    }
    char buf[96];
    std::snprintf(buf, sizeof buf, " [%.3f, %.3f] in ", r.start, r.end);
    char pbuf[64];
    std::snprintf(pbuf, sizeof pbuf, " [%.3f, %.3f]", stack.back()->start, stack.back()->end);
    bad.push_back(r.name.substr(0, 50) + buf + stack.back()->name.substr(0, 50) + pbuf);
  }
  return bad;
}

struct Checked {
  size_t ranges = 0;
  std::vector<std::string> exact, rounded;
  std::vector<std::string> hta_negative;  // events HTA's rounding gives a negative duration
  size_t moved = 0;                       // events with their recorded times in args
  double most_moved_us = 0;               // the farthest a start or end moved
};

Checked check_chrome(const std::string& json_path) {
  nlohmann::json doc = nlohmann::json::parse(test::read_file(json_path));
  std::map<std::pair<int64_t, int64_t>, std::vector<Range>> exact, rounded;
  Checked c;
  for (const auto& e : doc["traceEvents"]) {
    if (e.contains("dur") && e.value("cat", "") != "Trace") {
      const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
      if (std::floor(end) < std::ceil(ts))
        c.hta_negative.push_back(e.value("cat", "") + " " + e.value("name", "").substr(0, 50) + " ts " +
                                 std::to_string(ts) + " dur " + std::to_string(e["dur"].get<double>()));
      const nlohmann::json args = e.value("args", nlohmann::json::object());
      if (args.contains("recorded ts")) {
        ++c.moved;
        const double rts = args["recorded ts"].get<double>(), rend = rts + args["recorded dur"].get<double>();
        c.most_moved_us = std::max({c.most_moved_us, std::abs(ts - rts), std::abs(end - rend)});
      }
    }
    if (e.value("ph", "") != "X" || !host_category(e.value("cat", ""))) continue;
    double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    std::pair<int64_t, int64_t> thread{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
    std::string name = e.value("name", "");
    exact[thread].push_back({ts, ts + dur, name});
    rounded[thread].push_back({std::round(ts), std::round(ts + dur), name});
    ++c.ranges;
  }
  for (auto& [thread, ranges] : exact)
    for (auto& s : intersections(ranges)) c.exact.push_back(s);
  for (auto& [thread, ranges] : rounded)
    for (auto& s : intersections(ranges)) c.rounded.push_back(s);
  return c;
}

std::string first(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(v.size(), 4); ++i) out += "  " + v[i] + "\n";
  return out;
}

TEST(ChromeNesting, EveryRecordingNestsOnEachThread) {
  auto files = testing::recorded_data();
  ASSERT_GE(files.size(), 20u);
  size_t total = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    test::TempDir tmp;
    store::Reader r(testing::readable_recording(f));
    export_chrome(r, tmp.file("r.json"), {});
    Checked c = check_chrome(tmp.file("r.json"));
    total += c.ranges;
    EXPECT_EQ(c.exact.size(), 0u) << first(c.exact);
    EXPECT_EQ(c.rounded.size(), 0u) << first(c.rounded);
    EXPECT_EQ(c.hta_negative.size(), 0u) << "negative durations under HTA's rounding:\n" << first(c.hta_negative);
    EXPECT_LT(c.most_moved_us, 1.0);
    std::printf("%-36s %7zu host ranges, %5zu moved for HTA's rounding (at most %.3f us)\n",
                f.filename().string().c_str(), c.ranges, c.moved, c.most_moved_us);
  }
  RecordProperty("ranges_checked", std::to_string(total));
}

}  // namespace
}  // namespace gpuscope::formats
