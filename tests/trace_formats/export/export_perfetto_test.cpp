// Perfetto export: decodes with protoc against our .proto, keeps the rules
// Perfetto's trace processor relies on, and is at least 4x smaller than the
// uncompressed Chrome JSON of the same recording.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "trace_formats/export/exporters.h"
#include "trace_formats/store/reader.h"
#include "perfetto_trace.pb.h"
#include "tests/trace_formats/formats_test_util.h"
#include "tests/support/golden.h"

namespace gpuscope::formats {
namespace {

namespace pb = perfetto::protos;
using test::TempDir;

std::string decode_with_protoc(const std::string& file, int* exit_code) {
  std::string proto = GPUSCOPE_PERFETTO_PROTO;
  std::string dir = proto.substr(0, proto.rfind('/'));
  test::RunResult r = test::run(std::string(GPUSCOPE_PROTOC) + " --decode=perfetto.protos.Trace -I '" + dir + "' '" +
                                proto + "' < '" + file + "'");
  *exit_code = r.exit_code;
  return r.output;
}

struct Checked {
  int64_t begins = 0, ends = 0, instants = 0, counters = 0;
  std::map<uint64_t, int> flow_out, flow_in;
};

// The invariants trace processor needs: state cleared first, interned names
// and tracks described before use, balanced and never-decreasing slices.
Checked check_trace(const std::string& data) {
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(data));
  Checked c;
  std::set<uint64_t> names, tracks, counter_tracks;
  std::map<uint64_t, int> depth;
  bool cleared = false;
  uint64_t now = 0;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const pb::TracePacket& p = trace.packet(i);
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    if (i == 0) {
      cleared = p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED;
      EXPECT_EQ(p.trace_packet_defaults().timestamp_clock_id(), 64u);
      EXPECT_TRUE(p.has_clock_snapshot());
      continue;
    }
    now += p.timestamp();  // deltas on the incremental clock
    for (const auto& n : p.interned_data().event_names()) EXPECT_TRUE(names.insert(n.iid()).second);
    if (p.has_track_descriptor()) {
      const auto& td = p.track_descriptor();
      EXPECT_TRUE(tracks.insert(td.uuid()).second);
      if (td.has_parent_uuid()) {
        EXPECT_TRUE(tracks.count(td.parent_uuid())) << "parent described later";
      }
      if (td.has_counter()) counter_tracks.insert(td.uuid());
    }
    if (!p.has_track_event()) continue;
    EXPECT_TRUE(p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    const auto& te = p.track_event();
    EXPECT_TRUE(tracks.count(te.track_uuid())) << "event on an undescribed track";
    switch (te.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN:
        ++c.begins;
        ++depth[te.track_uuid()];
        EXPECT_TRUE(names.count(te.name_iid())) << "name used before it was interned";
        EXPECT_EQ(te.category_iids_size(), 1);
        for (uint64_t f : te.flow_ids()) ++c.flow_out[f];
        for (uint64_t f : te.terminating_flow_ids()) ++c.flow_in[f];
        break;
      case pb::TrackEvent::TYPE_SLICE_END:
        ++c.ends;
        EXPECT_GT(depth[te.track_uuid()]--, 0) << "END without BEGIN at " << now;
        break;
      case pb::TrackEvent::TYPE_INSTANT:
        ++c.instants;
        break;
      case pb::TrackEvent::TYPE_COUNTER:
        ++c.counters;
        EXPECT_TRUE(counter_tracks.count(te.track_uuid()));
        break;
      default:
        ADD_FAILURE() << "unexpected event type";
    }
  }
  EXPECT_TRUE(cleared);
  for (const auto& [track, d] : depth) EXPECT_EQ(d, 0) << "track " << track << " left open";
  return c;
}

TEST(PerfettoExport, DecodesAndKeepsTraceProcessorRules) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  store::Reader r(tmp.file("s.db"));
  ExportStats st = export_perfetto(r, tmp.file("s.pftrace"), {});
  int rc = -1;
  std::string text = decode_with_protoc(tmp.file("s.pftrace"), &rc);
  ASSERT_EQ(rc, 0) << text.substr(0, 2000);
  EXPECT_NE(text.find("TYPE_SLICE_BEGIN"), std::string::npos);

  Checked c = check_trace(test::read_file(tmp.file("s.pftrace")));
  // Every row with a duration is one slice: ops, ranges but marks, API calls,
  // GPU activity, syncs and steps.
  int64_t slices = r.count("op") + r.count("api_call") + r.count("kernel") + r.count("memcpy") +
                   r.count("memset") + r.count("sync") + r.count("step") +
                   r.db().query_int("SELECT count(*) FROM range WHERE kind != 3").value_or(0);
  EXPECT_EQ(c.begins, slices);
  EXPECT_EQ(c.ends, slices);
  EXPECT_EQ(c.instants, r.db().query_int("SELECT count(*) FROM range WHERE kind = 3").value_or(0));
  EXPECT_EQ(c.counters, r.count("counter") + 2 * r.db().query_int(
                                                    "SELECT count(*) FROM memory_event WHERE total_allocated "
                                                    "IS NOT NULL").value_or(0));
  EXPECT_EQ(static_cast<int64_t>(st.events), c.begins + c.instants + c.counters);
  // One arrow per launch, ending at each GPU activity it caused.
  EXPECT_EQ(c.flow_out.size(), 11u);
  for (const auto& [id, n] : c.flow_out) {
    EXPECT_EQ(n, 1);
    EXPECT_GE(c.flow_in[id], 1);
  }
  EXPECT_EQ(c.flow_in.size(), c.flow_out.size());
}

// CUPTI's overhead records (`record --trace ...,overhead`) are slices of the
// category "overhead", as Kineto names them, not user annotations.
TEST(PerfettoExport, TracerOverheadHasItsOwnCategory) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  test::add_tracer_overhead_range(tmp.file("s.db"));
  store::Reader r(tmp.file("s.db"));
  export_perfetto(r, tmp.file("s.pftrace"), {});
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(test::read_file(tmp.file("s.pftrace"))));
  std::map<uint64_t, std::string> categories, names;
  std::vector<std::string> overhead_slices;
  for (const auto& p : trace.packet()) {
    for (const auto& c : p.interned_data().event_categories()) categories[c.iid()] = c.name();
    for (const auto& n : p.interned_data().event_names()) names[n.iid()] = n.name();
    if (p.has_track_event() && p.track_event().type() == pb::TrackEvent::TYPE_SLICE_BEGIN &&
        categories[p.track_event().category_iids(0)] == "overhead")
      overhead_slices.push_back(names[p.track_event().name_iid()]);
  }
  EXPECT_EQ(overhead_slices, std::vector<std::string>{"CUPTI overhead: buffer flush"});
}

TEST(PerfettoExport, MatchesGolden) {
  TempDir tmp;
  test::SyntheticOptions small;
  small.steps = 1;
  small.second_process = false;
  test::make_synthetic_db(tmp.file("g.db"), small);
  store::Reader r(tmp.file("g.db"));
  export_perfetto(r, tmp.file("g.pftrace"), {});
  int rc = -1;
  std::string text = decode_with_protoc(tmp.file("g.pftrace"), &rc);
  ASSERT_EQ(rc, 0);
  std::string diff =
      test_support::golden_mismatch(std::string(GPUSCOPE_SOURCE_DIR) + "/tests/trace_formats/export/golden/synthetic.perfetto.txt", text);
  EXPECT_TRUE(diff.empty()) << diff;
}

TEST(PerfettoExport, AtLeastFourTimesSmallerThanChromeJson) {
  TempDir tmp;
  test::SyntheticOptions big;
  big.steps = 200;
  big.kernels_per_step = 20;
  test::make_synthetic_db(tmp.file("big.db"), big);
  store::Reader r(tmp.file("big.db"));
  ExportStats json = export_chrome(r, tmp.file("big.json"), {});
  ExportStats proto = export_perfetto(r, tmp.file("big.pftrace"), {});
  ASSERT_GT(proto.bytes, 0u);
  double ratio = double(json.bytes) / double(proto.bytes);
  RecordProperty("size_ratio", std::to_string(ratio));
  EXPECT_GE(ratio, 4.0) << json.bytes << " bytes of JSON vs " << proto.bytes << " of protobuf";
  check_trace(test::read_file(tmp.file("big.pftrace")));
}

std::string perfetto_bytes(const std::string& db, uint64_t rows_in_memory, const std::string& out) {
  store::Reader r(db);
  ExportOptions opt;
  opt.perfetto_rows_in_memory = rows_in_memory;
  export_perfetto(r, out, opt);
  return test::read_file(out);
}

// Rows are sorted in memory up to a limit and by SQLite past it: both must
// give the same bytes, also when row ids run against time (ids negated, so
// every table needs sorting and equal times fall back on id order).
TEST(PerfettoExport, InMemoryAndSqliteSortAgree) {
  TempDir tmp;
  test::make_synthetic_db(tmp.file("s.db"));
  std::string in_order = perfetto_bytes(tmp.file("s.db"), 1u << 20, tmp.file("a.pftrace"));
  EXPECT_EQ(in_order, perfetto_bytes(tmp.file("s.db"), 0, tmp.file("b.pftrace")));
  {
    store::Connection c(tmp.file("s.db"), store::Connection::Mode::kReadWrite);
    for (const char* t : {"op", "range", "api_call", "kernel", "memcpy", "memset", "sync", "step", "counter",
                          "memory_event"})
      c.exec("UPDATE " + std::string(t) + " SET id = -id");
  }
  std::string reversed = perfetto_bytes(tmp.file("s.db"), 1u << 20, tmp.file("c.pftrace"));
  EXPECT_EQ(reversed, perfetto_bytes(tmp.file("s.db"), 0, tmp.file("d.pftrace")));
  Checked a = check_trace(in_order), b = check_trace(reversed);
  EXPECT_EQ(a.begins, b.begins);
  EXPECT_EQ(a.instants, b.instants);
  EXPECT_EQ(a.counters, b.counters);
  EXPECT_EQ(a.flow_out, b.flow_out);
  EXPECT_EQ(a.flow_in, b.flow_in);
  EXPECT_GT(a.flow_in.size(), 0u);
}

TEST(PerfettoExport, RealRecordingsDecode) {
  for (const auto& db : test::data_files(".db")) {
    SCOPED_TRACE(db);
    TempDir tmp;
    store::Reader r(db);
    export_perfetto(r, tmp.file("r.pftrace"), {});
    int rc = -1;
    decode_with_protoc(tmp.file("r.pftrace"), &rc);
    EXPECT_EQ(rc, 0);
    check_trace(test::read_file(tmp.file("r.pftrace")));
  }
}

}  // namespace
}  // namespace gpuscope::formats
