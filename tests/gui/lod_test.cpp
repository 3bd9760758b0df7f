// The viewer's level of detail against the raw events: busy time per pixel
// column from the summaries, wide events, zoomed-out pyramids, counters, and
// lane packing.
#include <QtTest>

#include <cmath>
#include <random>

#include "gui/model/lod.h"
#include "gui/model/track_builder.h"

using namespace gpuscope;
using namespace gpuscope::gui;

namespace {

// Busy ns per column, straight from the events.
std::vector<double> raw_busy(const std::vector<Event>& ev, const Window& w) {
  std::vector<double> out(static_cast<size_t>(w.ncols), 0.0);
  for (const Event& e : ev) {
    for (int c = 0; c < w.ncols; ++c) {
      double a = w.t0 + w.ns_per_px * c, b = a + w.ns_per_px;
      double lo = std::max(a, static_cast<double>(e.start)), hi = std::min(b, static_cast<double>(e.end));
      if (hi > lo) out[static_cast<size_t>(c)] += hi - lo;
    }
  }
  return out;
}

// Non-overlapping events of a given shape, sorted.
std::vector<Event> make_lane(std::mt19937_64& rng, int n, int64_t max_gap, int64_t max_dur) {
  std::vector<Event> ev;
  int64_t t = 1000;
  std::uniform_int_distribution<int64_t> gap(0, max_gap), dur(0, max_dur);
  for (int i = 0; i < n; ++i) {
    Event e;
    e.start = t + gap(rng);
    e.end = e.start + dur(rng);
    e.name = static_cast<uint32_t>(i % 7);
    t = e.end;
    ev.push_back(e);
  }
  return ev;
}

}  // namespace

class LodTest : public QObject {
  Q_OBJECT
 private slots:
  void lodBusyMatchesRawPerColumn_data();
  void lodBusyMatchesRawPerColumn();
  void lodWideEventsPlusColumnsIsEverything();
  void lodUsesSummariesWhenZoomedOut();
  void busyInMatchesRaw();
  void counterColumnsMatchRaw();
  void packLanesNestsAndNeverOverlaps();
};

void LodTest::lodBusyMatchesRawPerColumn_data() {
  QTest::addColumn<int>("n");
  QTest::addColumn<qint64>("max_gap");
  QTest::addColumn<qint64>("max_dur");
  QTest::newRow("dense tiny") << 20000 << qint64(50) << qint64(40);
  QTest::newRow("sparse long") << 300 << qint64(100000) << qint64(500000);
  QTest::newRow("mixed") << 5000 << qint64(3000) << qint64(20000);
  QTest::newRow("instants") << 2000 << qint64(100) << qint64(0);
  QTest::newRow("single") << 1 << qint64(0) << qint64(1000);
}

void LodTest::lodBusyMatchesRawPerColumn() {
  QFETCH(int, n);
  QFETCH(qint64, max_gap);
  QFETCH(qint64, max_dur);
  std::mt19937_64 rng(42 + n);
  auto ev = make_lane(rng, n, max_gap, max_dur);
  LanePyramid lod;
  lod.build(ev);
  const double lo = static_cast<double>(ev.front().start), hi = static_cast<double>(ev.back().end);
  const double span = std::max(hi - lo, 10.0);
  // Fit-all, three zoom levels, a window hanging off each end, fractional pixels.
  std::vector<Window> windows = {
      {lo - span * 0.01, span * 1.02 / 500, 500}, {lo + span * 0.3, span * 0.1 / 700, 700},
      {lo + span * 0.5, span * 0.001 / 300, 300}, {lo + span * 0.25, 0.37, 900},
      {lo - span * 0.5, span / 400, 400},         {hi - span * 0.1, span / 300, 300}};
  // Exact, and as the timeline draws (blocks under 1/16 column split in proportion).
  for (const double split : {0.0, 1.0 / 16}) {
    for (const Window& w : windows) {
      ColumnAccum acc;
      acc.reset(w.ncols);
      lod.columns(ev, w, acc, nullptr, 3.0, split);
      auto want = raw_busy(ev, w);
      const double tolerance = std::max(1e-6 * std::max(1.0, w.ns_per_px), split * w.ns_per_px);
      double total_got = 0, total_want = 0;
      for (int c = 0; c < w.ncols; ++c) {
        const double got = acc.busy[static_cast<size_t>(c)], exp = want[static_cast<size_t>(c)];
        total_got += got;
        total_want += exp;
        if (std::fabs(got - exp) > tolerance)
          QFAIL(qPrintable(QStringLiteral("split %6, column %1 of window t0=%2 p=%3: lod %4 raw %5")
                               .arg(c).arg(w.t0).arg(w.ns_per_px).arg(got).arg(exp).arg(split)));
        // (Raw sums of column overlaps pick up rounding dust at column edges.)
        if (exp > 1e-6 * w.ns_per_px && acc.dominant[static_cast<size_t>(c)] == kNoEvent)
          QFAIL(qPrintable(QStringLiteral("column %1: busy %2 but no dominant event").arg(c).arg(exp)));
      }
      // Splitting moves busy time between neighbours, never loses it.
      QVERIFY(std::fabs(total_got - total_want) <= 2 * tolerance + 1e-6 * total_want);
    }
  }
}

void LodTest::lodWideEventsPlusColumnsIsEverything() {
  std::mt19937_64 rng(7);
  auto ev = make_lane(rng, 3000, 20000, 60000);
  LanePyramid lod;
  lod.build(ev);
  const Window w{static_cast<double>(ev[100].start), 200.0, 800};
  ColumnAccum acc;
  acc.reset(w.ncols);
  std::vector<uint32_t> wide;
  lod.columns(ev, w, acc, &wide, 3.0);
  QVERIFY(!wide.empty());
  for (uint32_t k : wide) QVERIFY(ev[k].duration() >= 3 * w.ns_per_px);
  std::vector<Event> wide_events;
  for (uint32_t k : wide) wide_events.push_back(ev[k]);
  auto from_wide = raw_busy(wide_events, w);
  auto want = raw_busy(ev, w);
  for (int c = 0; c < w.ncols; ++c)
    QVERIFY(std::fabs(acc.busy[static_cast<size_t>(c)] + from_wide[static_cast<size_t>(c)] - want[static_cast<size_t>(c)]) < 1e-6);
}

void LodTest::lodUsesSummariesWhenZoomedOut() {
  // At fit-all on a million events the pyramid answers per column without
  // touching most events: the walk must be far cheaper than the event count.
  std::vector<Event> ev;
  for (int i = 0; i < 1'000'000; ++i) ev.push_back({int64_t{i} * 100, int64_t{i} * 100 + 60, 1, 0, 0, EventKind::kKernel, 0});
  LanePyramid lod;
  lod.build(ev);
  QVERIFY(lod.levels() >= 16);
  QVERIFY2(lod.memory_bytes() <= ev.size() * 41 / 10, qPrintable(QString::number(lod.memory_bytes())));  // ~4 bytes per event
  const Window w{0, 1e8 / 1000, 1000};
  ColumnAccum acc;
  acc.reset(w.ncols);
  lod.columns(ev, w, acc);
  for (int c = 0; c < w.ncols; ++c) QCOMPARE(acc.busy[static_cast<size_t>(c)], 0.6 * w.ns_per_px);
}

void LodTest::busyInMatchesRaw() {
  std::mt19937_64 rng(11);
  auto ev = make_lane(rng, 4000, 5000, 8000);
  LanePyramid lod;
  lod.build(ev);
  std::uniform_int_distribution<int64_t> pick(0, ev.back().end + 1000);
  for (int i = 0; i < 200; ++i) {
    int64_t a = pick(rng), b = pick(rng);
    if (a > b) std::swap(a, b);
    int64_t want = 0;
    for (const Event& e : ev) want += std::max<int64_t>(0, std::min(e.end, b) - std::max(e.start, a));
    QCOMPARE(lod.busy_in(ev, a, b), want);
  }
}

void LodTest::counterColumnsMatchRaw() {
  std::vector<CounterSample> s;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> v(0, 100);
  for (int i = 0; i < 5000; ++i) s.push_back({1000 + i * 37, v(rng)});
  CounterPyramid lod;
  lod.build(s);
  const Window w{0, 1000.0, 250};
  std::vector<double> lo, hi;
  lod.columns(s, w, lo, hi);
  for (int c = 0; c < w.ncols; ++c) {
    const double a = w.t0 + c * w.ns_per_px, b = a + w.ns_per_px;
    double l = INFINITY, h = -INFINITY;
    for (size_t k = 0; k < s.size(); ++k) {
      const double end = k + 1 < s.size() ? static_cast<double>(s[k + 1].ts) : INFINITY;
      if (static_cast<double>(s[k].ts) < b && end > a) {
        l = std::min(l, s[k].value);
        h = std::max(h, s[k].value);
      }
    }
    if (std::isinf(l)) {
      QVERIFY(std::isnan(lo[static_cast<size_t>(c)]));
    } else {
      QCOMPARE(lo[static_cast<size_t>(c)], l);
      QCOMPARE(hi[static_cast<size_t>(c)], h);
    }
  }
}

void LodTest::packLanesNestsAndNeverOverlaps() {
  auto ev = [](int64_t a, int64_t b, EventKind k = EventKind::kOp) {
    Event e;
    e.start = a;
    e.end = b;
    e.kind = k;
    return e;
  };
  // parent [0,100] > child [10,50] > grandchild [20,30]; child [60,90]; an
  // API call with the parent's exact span nests inside it.
  std::vector<Event> in = {ev(60, 90), ev(20, 30), ev(0, 100, EventKind::kRange), ev(10, 50),
                           ev(0, 100, EventKind::kApiCall), ev(95, 120)};
  auto lanes = pack_lanes(in);
  QCOMPARE(lanes.size(), size_t(4));
  QCOMPARE(lanes[0].events.front().kind, EventKind::kRange);
  QCOMPARE(lanes[1].events.front().kind, EventKind::kApiCall);
  QCOMPARE(lanes[2].events.front().start, int64_t(10));
  QCOMPARE(lanes[3].events.front().start, int64_t(20));
  size_t total = 0;
  for (const auto& l : lanes) {
    total += l.events.size();
    for (size_t i = 1; i < l.events.size(); ++i) QVERIFY(l.events[i - 1].end <= l.events[i].start);
  }
  QCOMPARE(total, in.size());
}

QTEST_GUILESS_MAIN(LodTest)
#include "lod_test.moc"
