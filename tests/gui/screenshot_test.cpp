// `gpuscope view REC --screenshot` end to end: the real binaries render a
// committed real recording offscreen, compared against tests/gui/golden/ with a
// per-pixel tolerance and a cap on the share of differing pixels (fonts differ
// a little across machines). The comparison must be able to fail: a blank
// image and the same recording at another range do not match. Also the exit
// codes and messages for bad input.
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "tests/gui/synthetic_recording.h"
#include "tests/analyzer/recorded_data.h"

namespace {

const QString kSource = QStringLiteral(GPUSCOPE_SOURCE_DIR);
const QString kBin = QStringLiteral(GPUSCOPE_BINARY_DIR) + QStringLiteral("/bin");
constexpr int kChannelTolerance = 48;       // per channel, 0..255
constexpr double kMaxDifferingShare = 0.02; // of all pixels

struct Run {
  int rc = -1;
  QString err;
};

Run run(const QString& program, const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove(QStringLiteral("DISPLAY"));  // must work without a display
  env.remove(QStringLiteral("WAYLAND_DISPLAY"));
  env.remove(QStringLiteral("QT_QPA_PLATFORM"));
  p.setProcessEnvironment(env);
  p.start(program, args);
  if (!p.waitForFinished(120000)) return {};
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromLocal8Bit(p.readAllStandardError())};
}

struct Diff {
  bool same_size = false;
  double share = 1;  // of pixels beyond the tolerance
};

Diff compare(const QImage& a, const QImage& b) {
  Diff d;
  if (a.size() != b.size()) return d;
  d.same_size = true;
  const QImage x = a.convertToFormat(QImage::Format_RGB32), y = b.convertToFormat(QImage::Format_RGB32);
  qint64 differing = 0;
  for (int r = 0; r < x.height(); ++r) {
    auto* p = reinterpret_cast<const QRgb*>(x.constScanLine(r));
    auto* q = reinterpret_cast<const QRgb*>(y.constScanLine(r));
    for (int c = 0; c < x.width(); ++c) {
      const int dr = std::abs(qRed(p[c]) - qRed(q[c])), dg = std::abs(qGreen(p[c]) - qGreen(q[c])),
                db = std::abs(qBlue(p[c]) - qBlue(q[c]));
      if (std::max({dr, dg, db}) > kChannelTolerance) ++differing;
    }
  }
  d.share = static_cast<double>(differing) / (static_cast<double>(x.width()) * x.height());
  return d;
}

bool matches(const Diff& d) { return d.same_size && d.share <= kMaxDifferingShare; }

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT
 private slots:
  void matchesTheGoldenImage_data();
  void matchesTheGoldenImage();
  void comparisonCanFail();
  void throughTheCli();
  void badInput();

 private:
  QImage shoot(const QStringList& extra, const QString& recording = QStringLiteral("nvtx_loop.db"),
               QSize size = QSize(1200, 420));
  QTemporaryDir dir_;
  int counter_ = 0;
};

QImage ScreenshotTest::shoot(const QStringList& extra, const QString& recording, QSize size) {
  const QString out = dir_.filePath(QStringLiteral("shot%1.png").arg(counter_++));
  // A .db.zst recording is unpacked first.
  const QString input = QString::fromStdString(
      gpuscope::testing::readable_recording((kSource + QStringLiteral("/tests/data/") + recording).toStdString()));
  Run r = run(kBin + QStringLiteral("/gpuscope-view"),
              QStringList{input, QStringLiteral("--screenshot"), out, QStringLiteral("--timeline-only"), QStringLiteral("--size"),
                          QStringLiteral("%1x%2").arg(size.width()).arg(size.height())} +
                  extra);
  if (r.rc != 0) qWarning("gpuscope-view failed (%d): %s", r.rc, qPrintable(r.err));
  return QImage(out);
}

void ScreenshotTest::matchesTheGoldenImage_data() {
  QTest::addColumn<QString>("recording");
  QTest::addColumn<QStringList>("args");
  QTest::addColumn<QString>("golden");
  QTest::addColumn<QSize>("size");
  // NVTX ranges on two threads, whole recording.
  QTest::newRow("nvtx_loop") << QStringLiteral("nvtx_loop.db") << QStringList{QStringLiteral("--range"), QStringLiteral("all")}
                             << QStringLiteral("nvtx_loop") << QSize(1200, 420);
  // Without --range, as the viewer opens: the analysed steps of the H200 MLP
  // (steps 1-21, 1.06 s of its 1.47 s: start-up and the warm-up step left out).
  QTest::newRow("mlp_h200_analysed") << QStringLiteral("mlp_h200.db") << QStringList()
                                     << QStringLiteral("mlp_h200_analysed") << QSize(1200, 600);
  // The H200 known-work recording around its kernels: streams, copies, counters, threads.
  QTest::newRow("known_work_h200") << QStringLiteral("known_work_h200.db")
                                   << QStringList{QStringLiteral("--range"), QStringLiteral("0.4745:0.4790")}
                                   << QStringLiteral("known_work_h200") << QSize(1200, 420);
  // Four gloo DDP ranks on the CPU, steps 1 to 5: rank groups in rank order
  // with the analyzer's numbers (rank 3, the straggler, marked), step lanes,
  // steps aligned across ranks.
  QTest::newRow("ddp_gloo_4ranks_cpu") << QStringLiteral("ddp_gloo_4ranks_cpu.db.zst")
                                       << QStringList{QStringLiteral("--range"), QStringLiteral("5.54:5.66")}
                                       << QStringLiteral("ddp_gloo_4ranks_cpu") << QSize(1200, 980);
}

void ScreenshotTest::matchesTheGoldenImage() {
  QFETCH(QString, recording);
  QFETCH(QStringList, args);
  QFETCH(QString, golden);
  QFETCH(QSize, size);
  if (!QFileInfo::exists(kSource + QStringLiteral("/tests/data/") + recording)) QSKIP("recording not in tests/data");
  const QString want_path = kSource + QStringLiteral("/tests/gui/golden/") + golden + QStringLiteral(".png");
  const QImage got = shoot(args, recording, size);
  QVERIFY(!got.isNull());
  QCOMPARE(got.size(), size);
  if (qEnvironmentVariableIsSet("GPUSCOPE_UPDATE_GOLDEN")) {
    QVERIFY(got.save(want_path));
    QSKIP("golden image rewritten");
  }
  const QImage want(want_path);
  QVERIFY2(!want.isNull(), qPrintable(want_path + QStringLiteral(" missing; run with GPUSCOPE_UPDATE_GOLDEN=1")));
  const Diff d = compare(got, want);
  if (!matches(d)) {
    const QString actual = kSource + QStringLiteral("/tests/gui/golden/") + golden + QStringLiteral(".actual.png");
    got.save(actual);
    QFAIL(qPrintable(QStringLiteral("screenshot differs from %1: %2 % of pixels beyond tolerance %3 (allowed %4 %); wrote %5")
                         .arg(want_path)
                         .arg(100 * d.share, 0, 'f', 2)
                         .arg(kChannelTolerance)
                         .arg(100 * kMaxDifferingShare)
                         .arg(actual)));
  }
  qInfo("screenshot matches golden: %.3f %% of pixels differ", 100 * d.share);
}

void ScreenshotTest::comparisonCanFail() {
  const QImage want(kSource + QStringLiteral("/tests/gui/golden/nvtx_loop.png"));
  if (want.isNull()) QSKIP("no golden image");
  // Only the background: all the events are missing.
  QImage blank(want.size(), QImage::Format_RGB32);
  blank.fill(QColor(250, 250, 250));
  const Diff blank_diff = compare(blank, want);
  qInfo("blank image: %.2f %% of pixels differ", 100 * blank_diff.share);
  QVERIFY(!matches(blank_diff));
  // The same recording at another zoom.
  const QImage zoomed = shoot({QStringLiteral("--range"), QStringLiteral("0.4:0.6")});
  QVERIFY(!zoomed.isNull());
  const Diff d = compare(zoomed, want);
  qInfo("other range: %.2f %% of pixels differ", 100 * d.share);
  QVERIFY2(!matches(d), qPrintable(QString::number(d.share)));
  // And of another size.
  QVERIFY(!matches(compare(want.scaled(want.width() - 10, want.height()), want)));
  // The analysed steps, where the viewer opens, are not the whole recording.
  const QImage analysed(kSource + QStringLiteral("/tests/gui/golden/mlp_h200_analysed.png"));
  QVERIFY(!analysed.isNull());
  const QImage whole = shoot({QStringLiteral("--range"), QStringLiteral("all")}, QStringLiteral("mlp_h200.db"), analysed.size());
  QVERIFY(!whole.isNull());
  const Diff w = compare(whole, analysed);
  qInfo("whole recording against the analysed steps: %.2f %% of pixels differ", 100 * w.share);
  QVERIFY(!matches(w));
}

void ScreenshotTest::throughTheCli() {
  if (!QFileInfo::exists(kBin + QStringLiteral("/gpuscope"))) QSKIP("gpuscope CLI not built");
  const QString out = dir_.filePath(QStringLiteral("cli.png"));
  Run r = run(kBin + QStringLiteral("/gpuscope"),
              {QStringLiteral("view"), kSource + QStringLiteral("/tests/data/nvtx_loop.db"), QStringLiteral("--screenshot"),
               out, QStringLiteral("--size"), QStringLiteral("1000x700")});
  QVERIFY2(r.rc == 0, qPrintable(r.err));
  const QImage img(out);
  QCOMPARE(img.size(), QSize(1000, 700));
  // Without gpuscope-view next to it, `gpuscope view` says so and exits 2.
  QTemporaryDir lonely;
  const QString cli = lonely.filePath(QStringLiteral("gpuscope"));
  QVERIFY(QFile::copy(kBin + QStringLiteral("/gpuscope"), cli));
  QFile::setPermissions(cli, QFile::ExeOwner | QFile::ReadOwner);
  r = run(cli, {QStringLiteral("view"), QStringLiteral("x.db")});
  QCOMPARE(r.rc, 2);
  QVERIFY2(r.err.contains(QStringLiteral("gpuscope-view")) && r.err.contains(QStringLiteral("not built")), qPrintable(r.err));
  QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
}

void ScreenshotTest::badInput() {
  const QString viewer = kBin + QStringLiteral("/gpuscope-view");
  const QString garbage = dir_.filePath(QStringLiteral("garbage.db"));
  gpuscope::gui::test::write_garbage(garbage.toStdString());
  const QString out = dir_.filePath(QStringLiteral("bad.png"));
  Run r = run(viewer, {garbage, QStringLiteral("--screenshot"), out});
  QCOMPARE(r.rc, 2);
  QVERIFY2(r.err.contains(QStringLiteral("gpuscope view: ") + garbage + QStringLiteral(": not a gpuscope recording")), qPrintable(r.err));
  QVERIFY(!QFileInfo::exists(out));  // nothing left behind
  QVERIFY(QDir(dir_.path()).entryList({QStringLiteral(".bad*")}, QDir::Hidden | QDir::Files).isEmpty());
  // An existing output needs --force.
  QFile f(out);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.close();
  const QString rec = kSource + QStringLiteral("/tests/data/nvtx_loop.db");
  r = run(viewer, {rec, QStringLiteral("--screenshot"), out});
  QCOMPARE(r.rc, 2);
  QVERIFY(r.err.contains(QStringLiteral("--force")));
  r = run(viewer, {rec, QStringLiteral("--screenshot"), out, QStringLiteral("--force")});
  QCOMPARE(r.rc, 0);
  QVERIFY(!QImage(out).isNull());
  r = run(viewer, {rec, QStringLiteral("--screenshot"), out, QStringLiteral("--force"), QStringLiteral("--range"), QStringLiteral("5:1")});
  QCOMPARE(r.rc, 2);
  QVERIFY(r.err.contains(QStringLiteral("--range")));
}

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
