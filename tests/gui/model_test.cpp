// The viewer's model layer: loading a known recording, links, search,
// highlight order, and the item models under QAbstractItemModelTester
// (level-of-detail summaries and lane packing: lod_test.cpp).
#include <QAbstractItemModelTester>
#include <QSortFilterProxyModel>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <random>

#include "trace_formats/common/error.h"
#include "gui/model/format.h"
#include "gui/model/highlight.h"
#include "gui/model/loader.h"
#include "gui/model/lod.h"
#include "gui/model/recording_loader.h"
#include "gui/model/search.h"
#include "gui/model/summary_models.h"
#include "gui/model/track_builder.h"
#include "trace_formats/schema/enums.h"
#include "trace_formats/store/writer.h"
#include "tests/gui/synthetic_recording.h"

using namespace gpuscope;
using namespace gpuscope::gui;
using test::Synthetic;

namespace {

std::string temp_path(QTemporaryDir& dir, const char* name) {
  return dir.filePath(QString::fromLatin1(name)).toStdString();
}

}  // namespace

class ModelTest : public QObject {
  Q_OBJECT
 private slots:
  void loadsSyntheticRecording();
  void idsNearTheInt64LimitsKeepTheirOrder();
  void tracedStretchesGetTheirOwnTrack();
  void tracerOverheadNestsInsideTheCallItSlowed();
  void cpuAllocatorMemorySitsUnderItsProcess();
  void linksLaunchesAndOps();
  void summariesAreRight();
  void refusesBadFiles();
  void searchMatchesNames();
  void highlightWalksInTimeOrder();
  void modelsPassTester();
  void formatsAndParsesTimes();
};

namespace {

struct Loaded {
  QTemporaryDir dir;
  std::string path;
  Timeline tl;
  Loaded() {
    path = temp_path(dir, "synthetic.db");
    test::write_synthetic(path);
    Loader::load_blocking(path, tl);
  }
  const Track* track(const std::string& title) const {
    for (const auto& g : tl.groups())
      for (const Track* t : g.tracks)
        if (t->title == title) return t;
    return nullptr;
  }
  // The i-th event named `name` on `t` (any lane), in time order.
  EventRef nth(const Track* t, const std::string& name, int i) const {
    std::vector<EventRef> all;
    for (uint32_t l = 0; l < t->lanes.size(); ++l)
      for (uint32_t k = 0; k < t->lanes[l].events.size(); ++k)
        if (tl.name(t->lanes[l].events[k].name) == name) all.push_back({t, l, k});
    std::sort(all.begin(), all.end(), [](const EventRef& a, const EventRef& b) { return a.event().start < b.event().start; });
    return i < static_cast<int>(all.size()) ? all[static_cast<size_t>(i)] : EventRef{};
  }
};

}  // namespace

// A sampled recording's traced stretches (range source 7) are not NVTX ranges:
// they get a track of their own, above the threads.
void ModelTest::tracedStretchesGetTheirOwnTrack() {
  QTemporaryDir dir;
  const std::string path = temp_path(dir, "sampled.db");
  test::write_synthetic(path);
  {
    store::Writer w(path);
    w.begin();
    store::RangeRow r;
    r.pid = r.tid = 100;
    r.source = 7;
    r.kind = 2;
    r.name = "gpuscope: traced";
    r.start = Synthetic::kFirstStep;
    r.end = Synthetic::kFirstStep + Synthetic::kStepNs;
    w.add(r);
    w.commit();
  }
  Timeline tl;
  Loader::load_blocking(path, tl);
  const auto& tracks = tl.groups()[1].tracks;
  QCOMPARE(tracks.size(), size_t(2));
  QCOMPARE(QString::fromStdString(tracks[0]->title), QStringLiteral("traced (sampled recording)"));
  QCOMPARE(tracks[0]->lanes.size(), size_t(1));
  QCOMPARE(tracks[0]->lanes[0].events.size(), size_t(1));
  QCOMPARE(tracks[0]->lanes[0].events[0].end - tracks[0]->lanes[0].events[0].start, Synthetic::kStepNs);
  QCOMPARE(QString::fromStdString(tracks[1]->title), QStringLiteral("python3 100 (main)"));
}

// The torch plugin reports the CPU allocator with device -1 (plugins/torch/README.md):
// its totals are a row of the process that allocated, not of a "GPU -1".
void ModelTest::cpuAllocatorMemorySitsUnderItsProcess() {
  QTemporaryDir dir;
  const std::string path = temp_path(dir, "cpu_memory.db");
  test::write_synthetic(path);
  {
    store::Writer w(path);
    w.begin();
    for (int64_t i = 0; i < 10; ++i) {
      store::MemoryEventRow m;
      m.pid = Synthetic::kPid;
      m.device = -1;
      m.ts = Synthetic::kFirstStep + i * 1'000'000;
      m.source = schema::memory_source::torch_allocator;
      m.mem_kind = schema::mem_kind::pageable;
      m.bytes = 4096;
      m.total_allocated = (i + 1) * 4096;
      m.total_reserved = (i + 1) * 4096;
      w.add(m);
    }
    w.commit();
  }
  Timeline tl;
  Loader::load_blocking(path, tl);
  QStringList titles;
  for (const auto& g : tl.groups()) titles << QString::fromStdString(g.group.title);
  QCOMPARE(titles.size(), 2);  // GPU 0 and the process: no group for device -1
  QVERIFY2(!titles.join(QLatin1Char('|')).contains(QStringLiteral("GPU -1")), qPrintable(titles.join(QLatin1Char('|'))));
  QStringList process_rows, gpu_rows;
  for (const Track* t : tl.groups()[1].tracks) process_rows << QString::fromStdString(t->title);
  for (const Track* t : tl.groups()[0].tracks) gpu_rows << QString::fromStdString(t->title);
  QVERIFY2(process_rows.contains(QStringLiteral("torch allocated (CPU)")), qPrintable(process_rows.join(QLatin1Char('|'))));
  QVERIFY(process_rows.contains(QStringLiteral("torch reserved (CPU)")));
  // The GPU's own allocator rows stay with the GPU, under their plain names.
  QVERIFY(gpu_rows.contains(QStringLiteral("torch allocated")));
  QVERIFY(!gpu_rows.contains(QStringLiteral("torch allocated (CPU)")));
}

// `record --trace ...,overhead`: a CUPTI overhead record inside a launch is
// drawn on that thread, one lane below the call, as its own kind.
void ModelTest::tracerOverheadNestsInsideTheCallItSlowed() {
  QTemporaryDir dir;
  const std::string path = temp_path(dir, "overhead.db");
  test::write_synthetic(path);
  const int64_t launch = Synthetic::iter_start(0, 0) + 20'000;  // the first cudaLaunchKernel, 5 us
  {
    store::Writer w(path);
    w.begin();
    store::RangeRow r;
    r.pid = r.tid = Synthetic::kPid;
    r.source = schema::range_source::tracer_overhead;
    r.name = "CUPTI overhead: buffer flush";
    r.start = launch + 1'000;
    r.end = launch + 4'000;
    w.add(r);
    w.commit();
  }
  Timeline tl;
  Loader::load_blocking(path, tl);
  const Track* main = tl.groups()[1].tracks[0];
  QCOMPARE(main->lanes.size(), size_t(5));
  const auto& deepest = main->lanes[4].events;
  QCOMPARE(deepest.size(), size_t(1));
  QCOMPARE(deepest[0].kind, EventKind::kTracerOverhead);
  QCOMPARE(tl.name(deepest[0].name), std::string_view("CUPTI overhead: buffer flush"));
  QCOMPARE(main->lanes[3].events.front().kind, EventKind::kApiCall);
}

void ModelTest::loadsSyntheticRecording() {
  Loaded x;
  const Timeline& tl = x.tl;
  QVERIFY(tl.info());
  // The GPU group first, then the process.
  QCOMPARE(tl.groups().size(), size_t(2));
  QCOMPARE(QString::fromStdString(tl.groups()[0].group.title), QStringLiteral("GPU 0 · Test GPU"));
  QVERIFY(QString::fromStdString(tl.groups()[1].group.title).startsWith(QStringLiteral("Process 100 · python3")));
  QStringList gpu_rows;
  for (const Track* t : tl.groups()[0].tracks) gpu_rows << QString::fromStdString(t->title);
  QCOMPARE(gpu_rows, QStringList({"Stream 7", "Stream 13", "nvml_sm_util_pct", "torch allocated", "torch reserved"}));
  QCOMPARE(tl.groups()[1].tracks.size(), size_t(1));
  const Track* main = tl.groups()[1].tracks[0];
  QCOMPARE(QString::fromStdString(main->title), QStringLiteral("python3 100 (main)"));
  // Nesting on the main thread: train_step, then DataLoader wait / aten::linear,
  // aten::addmm, then the launches.
  QCOMPARE(main->lanes.size(), size_t(4));
  QCOMPARE(tl.name(main->lanes[0].events.front().name), std::string_view("train_step"));
  QCOMPARE(main->lanes[1].events.front().kind, EventKind::kDataLoader);
  QCOMPARE(tl.name(main->lanes[2].events.front().name), std::string_view("aten::addmm"));
  QCOMPARE(main->lanes[3].events.front().kind, EventKind::kApiCall);
  const int64_t n = int64_t{Synthetic::kSteps} * Synthetic::kIterations;
  // Per iteration: 2 ops, 3 API calls, 2 kernels, 1 copy; per step 2 ranges.
  QCOMPARE(tl.event_count(), n * 8 + Synthetic::kSteps * 2);
  const Track* s7 = x.track("Stream 7");
  QCOMPARE(s7->lanes.size(), size_t(1));
  QCOMPARE(static_cast<int64_t>(s7->lanes[0].events.size()), 2 * n);
  QCOMPARE(tl.steps().size(), size_t(Synthetic::kSteps));
  QCOMPARE(tl.steps()[1].start, Synthetic::kFirstStep + Synthetic::kStepNs);
  QCOMPARE(tl.t_min(), Synthetic::kFirstStep);
  const Track* util = x.track("nvml_sm_util_pct");
  QCOMPARE(util->type, TrackType::kCounter);
  QCOMPARE(util->unit, std::string("%"));
  QCOMPARE(util->counter_lod.max_value(), 99.0);
}

// An imported trace may carry any int64 as a pid or stream: sort keys are held
// at the limits (UBSan: signed overflow), so the order stays the ids' order.
void ModelTest::idsNearTheInt64LimitsKeepTheirOrder() {
  QVERIFY(process_group(nullptr, INT64_MAX - 3).sort_key > process_group(nullptr, 1 << 20).sort_key);
  QVERIFY(process_group(nullptr, INT64_MAX).sort_key > 0);
  QVERIFY(process_group(nullptr, INT64_MIN).sort_key < process_group(nullptr, 0).sort_key);
  QTemporaryDir dir;
  const std::string path = temp_path(dir, "big_ids.db");
  test::write_synthetic(path);
  {
    store::Connection c(path, store::Connection::Mode::kReadWrite);
    c.exec("UPDATE kernel SET stream = 9223372036854775800 WHERE stream = " + std::to_string(Synthetic::kSideStream));
    c.exec("UPDATE kernel SET stream = -9223372036854775800 WHERE stream = " + std::to_string(Synthetic::kStream));
    c.exec("UPDATE memcpy SET stream = -9223372036854775800 WHERE stream = " + std::to_string(Synthetic::kStream));
  }
  Timeline tl;
  Loader::load_blocking(path, tl);
  QStringList streams;
  for (const Track* t : tl.groups()[0].tracks)
    if (t->title.starts_with("Stream ")) streams << QString::fromStdString(t->title);
  QCOMPARE(streams, QStringList({"Stream -9223372036854775800", "Stream 9223372036854775800"}));
}

void ModelTest::linksLaunchesAndOps() {
  Loaded x;
  const Track* main = x.tl.groups()[1].tracks[0];
  const Track* s7 = x.track("Stream 7");
  // The 6th cudaLaunchKernel launched the 6th gemm, and back.
  EventRef launch = x.nth(main, "cudaLaunchKernel", 10);  // every other one is a relu launch
  QVERIFY(launch.valid());
  auto work = x.tl.gpu_work(launch);
  QCOMPARE(work.size(), size_t(1));
  QCOMPARE(work[0].track, s7);
  QCOMPARE(x.tl.name(work[0].event().name), std::string_view("gemm_kernel"));
  QCOMPARE(work[0].event().start, Synthetic::iter_start(0, 5) + 30'000);
  QVERIFY(x.tl.launch_of(work[0]) == launch);
  // The copy links to cudaMemcpyAsync.
  EventRef copy = x.nth(s7, "Memcpy HtoD", 3);
  QVERIFY(copy.valid());
  QCOMPARE(x.tl.name(x.tl.launch_of(copy).event().name), std::string_view("cudaMemcpyAsync"));
  // aten::linear of iteration 2 of step 1: its gemm and its copy, not the relu.
  EventRef op = x.nth(main, "aten::linear", Synthetic::kIterations + 2);
  auto gpu = x.tl.gpu_work_of_op(op);
  QCOMPARE(gpu.size(), size_t(2));
  for (const auto& g : gpu) QCOMPARE(g.track, s7);
  // Hit test: the middle of the gemm, and nothing in a gap.
  const Event& gemm = work[0].event();
  QVERIFY(Timeline::hit(s7, 0, (gemm.start + gemm.end) / 2, 0) == work[0]);
  QVERIFY(!Timeline::hit(s7, 0, gemm.end + 50'000, 1000).valid());
}

void ModelTest::summariesAreRight() {
  Loaded x;
  const auto& k = x.tl.kernel_summary();
  QCOMPARE(k.size(), size_t(2));
  const NameSummary& gemm = k[0];  // sorted by total, largest first
  QCOMPARE(x.tl.name(gemm.name), std::string_view("gemm_kernel"));
  const int64_t n = int64_t{Synthetic::kSteps} * Synthetic::kIterations;
  QCOMPARE(gemm.count, n);
  int64_t total = 0;
  for (int i = 0; i < Synthetic::kIterations; ++i) total += Synthetic::gemm_ns(i);
  QCOMPARE(gemm.total, total * Synthetic::kSteps);
  QCOMPARE(gemm.min, Synthetic::gemm_ns(0));
  QCOMPARE(gemm.max, Synthetic::gemm_ns(Synthetic::kIterations - 1));
  QCOMPARE(gemm.longest.event().duration(), gemm.max);
  const auto& m = x.tl.memcpy_summary();
  QCOMPARE(m.size(), size_t(1));
  QCOMPARE(int(m[0].copy_kind), 1);
  QCOMPARE(m[0].count, n);
  QCOMPARE(m[0].bytes, n * Synthetic::kCopyBytes);
  const auto& ops = x.tl.op_summary();
  QCOMPARE(ops.size(), size_t(2));
  QCOMPARE(x.tl.name(ops[0].name), std::string_view("aten::linear"));
  QCOMPARE(ops[0].total, n * 400'000);
}

void ModelTest::refusesBadFiles() {
  QTemporaryDir dir;
  auto expect_error = [](const std::string& path, const QString& needle) {
    Timeline tl;
    try {
      Loader::load_blocking(path, tl);
    } catch (const Error& e) {
      const QString what = QString::fromUtf8(e.what());
      QVERIFY2(what.startsWith(QString::fromStdString(path) + ": "), qPrintable(what));
      QVERIFY2(what.contains(needle), qPrintable(what));
      return;
    }
    QFAIL("no error");
  };
  const std::string garbage = temp_path(dir, "garbage.db");
  test::write_garbage(garbage);
  expect_error(garbage, QStringLiteral("not a gpuscope recording"));
  const std::string newer = temp_path(dir, "newer.db");
  test::write_newer_schema(newer);
  expect_error(newer, QStringLiteral("newer gpuscope"));
  expect_error(temp_path(dir, "missing.db"), QStringLiteral("no such file"));
}

void ModelTest::searchMatchesNames() {
  const StringTable names = {"", "gemm_kernel", "relu_kernel", "aten::addmm", "Memcpy HtoD"};
  auto on = [](const std::vector<bool>& m) {
    QList<int> ids;
    for (size_t i = 0; i < m.size(); ++i)
      if (m[i]) ids << static_cast<int>(i);
    return ids;
  };
  QCOMPARE(on(match_names(names, QStringLiteral("KERNEL"), false)), QList<int>({1, 2}));
  QCOMPARE(on(match_names(names, QStringLiteral("^(gemm|aten)"), true)), QList<int>({1, 3}));
  QCOMPARE(on(match_names(names, QStringLiteral("^(gemm|aten)"), false)), QList<int>());
  QString error;
  QCOMPARE(on(match_names(names, QStringLiteral("(unclosed"), true, &error)), QList<int>());
  QVERIFY(!error.isEmpty());
}

void ModelTest::highlightWalksInTimeOrder() {
  Loaded x;
  Highlight h;
  const auto& strings = *x.tl.strings();
  auto mask = match_names(strings, QStringLiteral("_kernel"), false);
  h.select(x.tl, [&](const Event& e) { return mask[e.name]; });
  const size_t n = size_t{Synthetic::kSteps} * Synthetic::kIterations;
  QCOMPARE(h.count(), 2 * n);
  // Walking forward visits every match once, in start order; rank counts them.
  EventRef cur = h.next({}, INT64_MIN);
  int64_t last = INT64_MIN;
  size_t seen = 0;
  while (cur.valid()) {
    QVERIFY(cur.event().start >= last);
    last = cur.event().start;
    ++seen;
    QCOMPARE(h.rank(cur), seen);
    cur = h.next(cur, 0);
  }
  QCOMPARE(seen, 2 * n);
  // And back.
  cur = h.prev({}, INT64_MAX);
  QCOMPARE(h.rank(cur), 2 * n);
  QCOMPARE(h.rank(h.prev(cur, 0)), 2 * n - 1);
  // From a time: the first match at or after it.
  const int64_t t = Synthetic::iter_start(2, 7);
  EventRef first = h.next({}, t);
  QCOMPARE(first.event().start, t + 30'000);
  // An op's GPU work as an explicit set.
  Highlight ops;
  ops.select_refs({first});
  QCOMPARE(ops.count(), size_t(1));
  QVERIFY(ops.find(first.track, first.lane) != nullptr);
}

void ModelTest::modelsPassTester() {
  Loaded x;
  NameSummaryModel kernels;
  QAbstractItemModelTester t1(&kernels, QAbstractItemModelTester::FailureReportingMode::QtTest);
  kernels.set(x.tl.kernel_summary(), x.tl.strings());
  QCOMPARE(kernels.rowCount(), 2);
  QCOMPARE(kernels.data(kernels.index(0, NameSummaryModel::kName), Qt::DisplayRole).toString(), QStringLiteral("gemm_kernel"));
  QCOMPARE(kernels.data(kernels.index(0, NameSummaryModel::kCount), kSortRole).toLongLong(),
           qint64(Synthetic::kSteps) * Synthetic::kIterations);
  kernels.set({}, nullptr);
  QCOMPARE(kernels.rowCount(), 0);
  kernels.set(x.tl.op_summary(), x.tl.strings());

  // Sorting and filtering through a proxy, as the tables do.
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&kernels);
  proxy.setSortRole(kSortRole);
  QAbstractItemModelTester t2(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  proxy.sort(NameSummaryModel::kTotal, Qt::AscendingOrder);
  QCOMPARE(proxy.data(proxy.index(0, NameSummaryModel::kName)).toString(), QStringLiteral("aten::addmm"));
  proxy.setFilterKeyColumn(NameSummaryModel::kName);
  proxy.setFilterRegularExpression(QStringLiteral("linear"));
  QCOMPARE(proxy.rowCount(), 1);

  MemcpySummaryModel copies;
  QAbstractItemModelTester t3(&copies, QAbstractItemModelTester::FailureReportingMode::QtTest);
  copies.set(x.tl.memcpy_summary());
  QCOMPARE(copies.data(copies.index(0, MemcpySummaryModel::kDirection)).toString(), QStringLiteral("HtoD"));

  FindingsModel findings;
  QAbstractItemModelTester t4(&findings, QAbstractItemModelTester::FailureReportingMode::QtTest);
  FindingItem f;
  f.id = "host_sync";
  f.title = "Host waits on the GPU every step";
  f.severity = "high";
  f.saving_ns = 12e6;
  f.saving_fraction = 0.1;
  f.evidence = {{100, 200, "step 3", -1, -1}};
  FindingItem g = f;
  g.id = "straggler";
  g.title = "One rank is slower and the others wait for it";
  g.rank = 2;
  findings.set({f, g});
  QCOMPARE(findings.rowCount(), 2);
  QCOMPARE(findings.data(findings.index(0, FindingsModel::kRule), Qt::DisplayRole).toString(), QStringLiteral("host_sync"));
  // A cross-rank finding names its rank in the list.
  QCOMPARE(findings.data(findings.index(0, FindingsModel::kTitle), Qt::DisplayRole).toString(),
           QStringLiteral("Host waits on the GPU every step"));
  QCOMPARE(findings.data(findings.index(1, FindingsModel::kTitle), Qt::DisplayRole).toString(),
           QStringLiteral("One rank is slower and the others wait for it — rank 2"));
  QCOMPARE(findings.data(findings.index(0, FindingsModel::kSaving), Qt::DisplayRole).toString(), QStringLiteral("12.000 ms (10.0 %)"));
  findings.set({});
}

void ModelTest::formatsAndParsesTimes() {
  QCOMPARE(QString::fromStdString(format_duration(850)), QStringLiteral("850 ns"));
  QCOMPARE(QString::fromStdString(format_duration(12'300)), QStringLiteral("12.3 µs"));
  QCOMPARE(QString::fromStdString(format_duration(1'234'000'000)), QStringLiteral("1.234 s"));
  QCOMPARE(QString::fromStdString(format_count(1234567)), QStringLiteral("1,234,567"));
  int64_t ns = 0;
  QVERIFY(parse_time("1.5", ns));
  QCOMPARE(ns, int64_t(1'500'000'000));
  QVERIFY(parse_time("250ms", ns));
  QCOMPARE(ns, int64_t(250'000'000));
  QVERIFY(parse_time("10us", ns));
  QCOMPARE(ns, int64_t(10'000));
  QVERIFY(!parse_time("10 parsecs", ns));
  QVERIFY(!parse_time("", ns));
}

QTEST_GUILESS_MAIN(ModelTest)
#include "model_test.moc"
