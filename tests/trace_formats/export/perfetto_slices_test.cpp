// Perfetto export as Perfetto's trace processor reads it: slices rebuilt from
// the .pftrace the way it does (a stack per track; BEGIN pushes, an END
// carries no name and closes the most recent open slice of its track) must
// have the recording's start, duration and name, on every recording in
// tests/data and on the synthetic one.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "trace_formats/common/text.h"
#include "trace_formats/export/exporters.h"
#include "perfetto_trace.pb.h"
#include "trace_formats/store/reader.h"
#include "tests/analyzer/recorded_data.h"
#include "tests/trace_formats/formats_test_util.h"

namespace gpuscope::formats {
namespace {

namespace pb = perfetto::protos;

// One slice: the table it comes from (by category), start, duration and name
// ("" where the export builds the name from codes: copies, sets, syncs, steps).
using Slice = std::tuple<std::string, int64_t, int64_t, std::string>;

std::string table_of(const std::string& category) {
  static const std::map<std::string, std::string> kTable = {
      {"cpu_op", "op"},          {"user_annotation", "range"}, {"python_function", "range"},
      {"overhead", "range"},     {"gpu_user_annotation", "range"}, {"cuda_runtime", "api_call"},
      {"cuda_driver", "api_call"}, {"kernel", "kernel"},       {"gpu_memcpy", "memcpy"},
      {"gpu_memset", "memset"},  {"cuda_sync", "sync"},        {"step", "step"},
      {"gpuscope", "gpuscope"}};
  auto it = kTable.find(category);
  return it == kTable.end() ? "?" + category : it->second;
}

bool named_table(const std::string& table) {
  return table == "op" || table == "range" || table == "api_call" || table == "kernel";
}

// The slices as the trace processor rebuilds them. Also counts ENDs that found
// no open slice and slices left open.
std::vector<Slice> rebuild(const std::string& bytes, int64_t* unbalanced) {
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes));
  std::map<uint64_t, std::string> categories, names;
  struct Open {
    int64_t ts;
    std::string table, name;
  };
  std::map<uint64_t, std::vector<Open>> stacks;
  std::vector<Slice> out;
  int64_t now = 0;
  *unbalanced = 0;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    if (i > 0) now += static_cast<int64_t>(p.timestamp());  // deltas on the incremental clock
    for (const auto& c : p.interned_data().event_categories()) categories[c.iid()] = c.name();
    for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    if (!p.has_track_event()) continue;
    const pb::TrackEvent& te = p.track_event();
    auto& stack = stacks[te.track_uuid()];
    if (te.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      std::string table = table_of(categories[te.category_iids(0)]);
      stack.push_back({now, table, named_table(table) ? names[te.name_iid()] : ""});
    } else if (te.type() == pb::TrackEvent::TYPE_SLICE_END) {
      if (stack.empty()) {
        ++*unbalanced;
        continue;
      }
      // gpuscope's own marks (untraced stretches) are no recorded rows.
      if (stack.back().table != "gpuscope")
        out.emplace_back(stack.back().table, stack.back().ts, now - stack.back().ts, stack.back().name);
      stack.pop_back();
    }
  }
  for (const auto& [track, stack] : stacks) *unbalanced += static_cast<int64_t>(stack.size());
  return out;
}

// The recording's slices: every row with a duration, as the export reads it
// (an unclosed range lasts 0, a reversed row too).
std::vector<Slice> recorded(store::Reader& r) {
  std::vector<Slice> out;
  auto add = [&](const std::string& table, const std::string& sql, bool named) {
    auto q = r.query(sql);
    const int start_col = q.column("start"), end_col = q.column("end");
    const int name_col = named ? q.column("name") : -1;
    while (q.step()) {
      int64_t start = std::max<int64_t>(q.int64(start_col), 0);
      int64_t end = std::max(q.int64(end_col), start);
      out.emplace_back(table, start, end - start, named ? valid_utf8(q.is_null(name_col) ? "" : q.text(name_col)) : "");
    }
  };
  const std::string name = ", (SELECT value FROM string WHERE id = name_id) AS name";
  add("op", "SELECT start, \"end\"" + name + " FROM op", true);
  add("range", "SELECT start, coalesce(\"end\", start) AS \"end\"" + name + " FROM range WHERE kind != 3", true);
  add("api_call", "SELECT start, \"end\"" + name + " FROM api_call", true);
  add("kernel", "SELECT start, \"end\"" + name + " FROM kernel", true);
  for (const char* t : {"memcpy", "memset", "sync", "step"})
    add(t, std::string("SELECT start, \"end\" FROM ") + t, false);
  return out;
}

struct Compared {
  size_t slices = 0, mismatches = 0;
  std::string examples;
};

Compared compare(const std::string& db, const std::string& pftrace) {
  store::Reader r(db);
  ExportOptions opt;
  export_perfetto(r, pftrace, opt);
  int64_t unbalanced = 0;
  std::vector<Slice> got = rebuild(test::read_file(pftrace), &unbalanced);
  std::vector<Slice> want = recorded(r);
  EXPECT_EQ(unbalanced, 0);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  std::vector<Slice> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  Compared c;
  c.slices = want.size();
  c.mismatches = missing.size() + extra.size();
  for (size_t i = 0; i < std::min<size_t>(missing.size(), 3); ++i) {
    const auto& [t, s, d, n] = missing[i];
    c.examples += "  recorded " + t + " " + n.substr(0, 60) + " at " + std::to_string(s) + " lasting " +
                  std::to_string(d) + " ns\n";
  }
  for (size_t i = 0; i < std::min<size_t>(extra.size(), 3); ++i) {
    const auto& [t, s, d, n] = extra[i];
    c.examples += "  rebuilt " + t + " " + n.substr(0, 60) + " at " + std::to_string(s) + " lasting " +
                  std::to_string(d) + " ns\n";
  }
  return c;
}

TEST(PerfettoSlices, SyntheticRecordingRebuildsExactly) {
  test::TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  Compared c = compare(tmp.file("s.db"), tmp.file("s.pftrace"));
  EXPECT_GT(c.slices, 0u);
  EXPECT_EQ(c.mismatches, 0u) << c.examples;
}

// Kernels that overlap on one stream and an API call that outlives its op:
// the cases that used to be cut short at their predecessor's end.
TEST(PerfettoSlices, PartlyOverlappingSlicesKeepTheirDurations) {
  test::TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  {
    store::Connection c(tmp.file("s.db"), store::Connection::Mode::kReadWrite);
    c.exec("INSERT INTO kernel (pid, device, stream, correlation, start, \"end\", name_id) SELECT pid, device, "
           "stream, 0, start + 10, \"end\" + 1398, name_id FROM kernel ORDER BY id LIMIT 1");
    c.exec("INSERT INTO api_call (pid, tid, domain, cbid, name_id, start, \"end\", correlation, return_code) "
           "SELECT pid, tid, 1, 131, name_id, \"end\" - 5, \"end\" + 1000, 0, 0 FROM op ORDER BY id LIMIT 1");
  }
  Compared c = compare(tmp.file("s.db"), tmp.file("s.pftrace"));
  EXPECT_EQ(c.mismatches, 0u) << c.examples;
}

TEST(PerfettoSlices, EveryRecordingRebuildsExactly) {
  auto files = testing::recorded_data();
  ASSERT_GE(files.size(), 20u);
  size_t total = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    test::TempDir tmp;
    Compared c = compare(testing::readable_recording(f), tmp.file("r.pftrace"));
    total += c.slices;
    EXPECT_EQ(c.mismatches, 0u) << c.mismatches << " of " << c.slices << " slices differ\n" << c.examples;
  }
  RecordProperty("slices_compared", std::to_string(total));
}

}  // namespace
}  // namespace gpuscope::formats
