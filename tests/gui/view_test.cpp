// The viewer driven like a user, through QTest events on an offscreen window:
// zoom, pan, W/A/S/D, click to select, details, launch links, op highlights,
// search next/previous, range measurement, group collapse, tables, findings,
// opening (async, drag and drop) and the error dialog for bad files.
#include <QCheckBox>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/model/findings_source.h"
#include "gui/model/search.h"
#include "tests/gui/synthetic_recording.h"
#include "gui/view/details_panel.h"
#include "gui/view/main_window.h"
#include "gui/view/search_bar.h"
#include "gui/view/tables_panel.h"
#include "gui/view/timeline_view.h"

using namespace gpuscope::gui;
using test::Synthetic;

namespace {

void send_mouse(QWidget* w, QEvent::Type type, QPoint pos, Qt::MouseButtons buttons,
                Qt::KeyboardModifiers mods = Qt::NoModifier) {
  const Qt::MouseButton button = type == QEvent::MouseMove ? Qt::NoButton : Qt::LeftButton;
  QMouseEvent e(type, QPointF(pos), w->mapToGlobal(QPointF(pos)), button, buttons, mods);
  QApplication::sendEvent(w, &e);
}

// Press, move in steps, release: a drag as the mouse makes it.
void drag(QWidget* w, QPoint from, QPoint to, Qt::KeyboardModifiers mods = Qt::NoModifier) {
  send_mouse(w, QEvent::MouseButtonPress, from, Qt::LeftButton, mods);
  for (int i = 1; i <= 4; ++i)
    send_mouse(w, QEvent::MouseMove, from + (to - from) * i / 4, Qt::LeftButton, mods);
  send_mouse(w, QEvent::MouseButtonRelease, to, Qt::NoButton, mods);
}

void wheel(QWidget* w, QPoint pos, int delta) {
  QWheelEvent e(QPointF(pos), w->mapToGlobal(QPointF(pos)), QPoint(), QPoint(0, delta), Qt::NoButton,
                Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(w, &e);
}

// All events called `name` in time order, across the timeline.
std::vector<EventRef> events_named(const Timeline& tl, const std::string& name) {
  std::vector<EventRef> out;
  for (const auto& g : tl.groups())
    for (const Track* t : g.tracks)
      for (uint32_t l = 0; l < t->lanes.size(); ++l)
        for (uint32_t k = 0; k < t->lanes[l].events.size(); ++k)
          if (tl.name(t->lanes[l].events[k].name) == name) out.push_back({t, l, k});
  std::sort(out.begin(), out.end(), [](const EventRef& a, const EventRef& b) { return a.event().start < b.event().start; });
  return out;
}

}  // namespace

class ViewTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void init();
  void wheelZoomsAtTheCursor();
  void dragPans();
  void wasdKeys();
  void clickSelectsAndShowsEveryField();
  void launchLinksBothWays();
  void selectingAnOpHighlightsItsKernels();
  void searchNextAndPrevious();
  void rulerDragMeasuresARange();
  void groupsCollapseAndExpand();
  void tableRowHighlightsAndJumpsToTheLongest();
  void findingsPanel();
  void asyncOpenAndRecentFiles();
  void dropOpensAFile();
  void badFilesGiveADialogAndKeepTheViewer();
  void cleanupTestCase();

 private:
  // Puts `ref` in the middle of a view `span` ns wide.
  void centre(const EventRef& ref, double span);

  QTemporaryDir dir_;
  QString db_;
  MainWindow* w_ = nullptr;
  TimelineView* v_ = nullptr;
};

void ViewTest::initTestCase() {
  db_ = dir_.filePath(QStringLiteral("synthetic.db"));
  test::write_synthetic(db_.toStdString());
  w_ = new MainWindow;
  w_->resize(1400, 900);
  w_->show();
  QVERIFY(QTest::qWaitForWindowExposed(w_));
  QString error;
  QVERIFY2(w_->openBlocking(db_, &error, false), qPrintable(error));
  v_ = w_->timelineView();
  QVERIFY(v_->timelineWidth() > 600);
}

void ViewTest::init() {
  v_->select({});
  v_->clearRangeSelection();
  v_->fitAll();
}

void ViewTest::cleanupTestCase() { delete w_; }

void ViewTest::centre(const EventRef& ref, double span) {
  const double mid = (static_cast<double>(ref.event().start) + static_cast<double>(ref.event().end)) / 2;
  v_->setRange(mid - span / 2, mid + span / 2);
}

void ViewTest::wheelZoomsAtTheCursor() {
  const QPoint at(TimelineView::kHeaderWidth + 300, 200);
  const double t_at = v_->timeAt(at.x()), span = v_->viewEnd() - v_->viewStart();
  wheel(v_, at, 120);  // one notch in
  QVERIFY(v_->viewEnd() - v_->viewStart() < span * 0.9);
  QVERIFY(std::abs(v_->timeAt(at.x()) - t_at) < 2 * v_->nsPerPixel());
  wheel(v_, at, -120);  // and out again
  QVERIFY(std::abs((v_->viewEnd() - v_->viewStart()) - span) < span * 1e-6);
  QVERIFY(std::abs(v_->timeAt(at.x()) - t_at) < 2 * v_->nsPerPixel());
}

void ViewTest::dragPans() {
  wheel(v_, QPoint(TimelineView::kHeaderWidth + 300, 200), 600);  // zoom in first
  const double t0 = v_->viewStart(), p = v_->nsPerPixel();
  drag(v_, QPoint(700, 300), QPoint(560, 300));
  QVERIFY2(std::abs(v_->viewStart() - (t0 + 140 * p)) < p, qPrintable(QString::number((v_->viewStart() - t0) / p)));
  QVERIFY(!v_->selected().valid());  // a drag is not a click
  drag(v_, QPoint(560, 300), QPoint(700, 300));
  QVERIFY(std::abs(v_->viewStart() - t0) < p);
}

void ViewTest::wasdKeys() {
  v_->setFocus();
  wheel(v_, QPoint(TimelineView::kHeaderWidth + 300, 200), 360);
  const double span = v_->viewEnd() - v_->viewStart(), t0 = v_->viewStart();
  QTest::keyClick(v_, Qt::Key_W);
  QVERIFY(std::abs((v_->viewEnd() - v_->viewStart()) - 0.8 * span) < span * 1e-6);
  QTest::keyClick(v_, Qt::Key_S);
  QVERIFY(std::abs((v_->viewEnd() - v_->viewStart()) - span) < span * 1e-6);
  const double t_mid = v_->viewStart();
  QTest::keyClick(v_, Qt::Key_D);
  QVERIFY(std::abs(v_->viewStart() - (t_mid + 0.15 * span)) < span * 1e-6);
  QTest::keyClick(v_, Qt::Key_A);
  QVERIFY(std::abs(v_->viewStart() - t_mid) < span * 1e-6);
  (void)t0;
  QTest::keyClick(v_, Qt::Key_0);  // fit all
  QVERIFY(v_->viewStart() < static_cast<double>(w_->timeline()->t_min()));
  QVERIFY(v_->viewEnd() > static_cast<double>(w_->timeline()->t_max()));
}

void ViewTest::clickSelectsAndShowsEveryField() {
  auto gemms = events_named(*w_->timeline(), "gemm_kernel");
  QCOMPARE(gemms.size(), size_t(Synthetic::kSteps * Synthetic::kIterations));
  const EventRef gemm = gemms[17];
  centre(gemm, 2e6);
  const QPoint pos = v_->eventPosition(gemm);
  QVERIFY(pos.x() > 0);
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, pos);
  QVERIFY(v_->selected() == gemm);
  const QString text = w_->detailsPanel()->text();
  for (const char* want : {"gemm_kernel", "kind: kernel", "grid_x: 128", "block_x: 256", "registers: 64",
                           "stream: 7", "duration: ", "launched by: cudaLaunchKernel", "table: kernel"})
    QVERIFY2(text.contains(QString::fromUtf8(want)), qPrintable(QStringLiteral("missing '%1' in:\n%2").arg(want, text)));
  // A click on empty space clears the selection.
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, QPoint(pos.x(), v_->height() - 5));
  QVERIFY(!v_->selected().valid());
  // F zooms to the selection.
  v_->select(gemm);
  v_->setFocus();
  QTest::keyClick(v_, Qt::Key_F);
  QVERIFY(v_->viewStart() <= static_cast<double>(gemm.event().start));
  QVERIFY(v_->viewEnd() >= static_cast<double>(gemm.event().end));
  QVERIFY(v_->viewEnd() - v_->viewStart() < 2.0 * static_cast<double>(gemm.event().duration()));
}

void ViewTest::launchLinksBothWays() {
  auto launches = events_named(*w_->timeline(), "cudaLaunchKernel");
  const EventRef launch = launches[40];  // iteration 20 of step 0: a gemm launch
  centre(launch, 1.5e6);
  QImage before(v_->size(), QImage::Format_ARGB32_Premultiplied);
  v_->render(before);
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, v_->eventPosition(launch));
  QVERIFY(v_->selected() == launch);
  QVERIFY(w_->detailsPanel()->text().contains(QStringLiteral("launches: 1 GPU op(s)")));
  const EventRef kernel = w_->detailsPanel()->linkTarget();
  QVERIFY(kernel.valid());
  QCOMPARE(w_->timeline()->name(kernel.event().name), std::string_view("gemm_kernel"));
  // The arrow from the launch to its kernel is drawn (its red shows up).
  QImage after(v_->size(), QImage::Format_ARGB32_Premultiplied);
  v_->render(after);
  auto reds = [](const QImage& img) {
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
      for (int x = 0; x < img.width(); ++x) {
        QRgb c = img.pixel(x, y);
        if (qRed(c) > 190 && qGreen(c) < 100 && qBlue(c) < 80) ++n;
      }
    return n;
  };
  QVERIFY2(reds(after) > reds(before) + 30, qPrintable(QStringLiteral("%1 vs %2").arg(reds(after)).arg(reds(before))));
  // "Go to" follows the link, and back.
  QMetaObject::invokeMethod(w_->detailsPanel(), "followRequested");
  QVERIFY(v_->selected() == kernel);
  QVERIFY(w_->detailsPanel()->linkTarget() == launch);
}

void ViewTest::selectingAnOpHighlightsItsKernels() {
  auto ops = events_named(*w_->timeline(), "aten::linear");
  const EventRef op = ops[3];
  centre(op, 1e6);
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, v_->eventPosition(op));
  QVERIFY(v_->selected() == op);
  QCOMPARE(w_->highlight().count(), size_t(2));  // its gemm and its copy
  auto gemms = events_named(*w_->timeline(), "gemm_kernel");
  QVERIFY(w_->highlight().find(gemms[3].track, gemms[3].lane) != nullptr);
  QVERIFY(w_->detailsPanel()->text().contains(QStringLiteral("GPU work: 2 op(s)")));
  // Selecting something else drops the op's highlight.
  v_->select(gemms[9]);
  QVERIFY(w_->highlight().empty());
}

void ViewTest::searchNextAndPrevious() {
  SearchBar* s = w_->searchBar();
  QLineEdit* edit = s->edit();
  edit->clear();
  QTest::keyClicks(edit, QStringLiteral("relu"));
  QTest::keyClick(edit, Qt::Key_Return);
  const int n = Synthetic::kSteps * Synthetic::kIterations;
  auto relus = events_named(*w_->timeline(), "relu_kernel");
  QVERIFY(v_->selected() == relus[0]);
  QCOMPARE(s->result(), QStringLiteral("1 / %1").arg(n));
  QVERIFY(v_->eventPosition(relus[0]).x() > 0);  // brought on screen
  QTest::keyClick(edit, Qt::Key_Return);
  QVERIFY(v_->selected() == relus[1]);
  QCOMPARE(s->result(), QStringLiteral("2 / %1").arg(n));
  QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);
  QVERIFY(v_->selected() == relus[0]);
  QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);  // wraps to the last
  QVERIFY(v_->selected() == relus.back());
  // A regular expression matching both kernels.
  s->regexBox()->setChecked(true);
  edit->clear();
  QTest::keyClicks(edit, QStringLiteral("^(gemm|relu)_"));
  QTest::keyClick(edit, Qt::Key_Return);
  QCOMPARE(w_->highlight().count(), size_t(2 * n));
  // A bad one says so and keeps the viewer.
  edit->clear();
  QTest::keyClicks(edit, QStringLiteral("(oops"));
  QTest::keyClick(edit, Qt::Key_Return);
  QVERIFY(s->result().startsWith(QStringLiteral("bad regex")));
  s->regexBox()->setChecked(false);
  edit->clear();
  QTest::keyClick(edit, Qt::Key_Return);
  QVERIFY(w_->highlight().empty());
}

void ViewTest::rulerDragMeasuresARange() {
  // Step 1 exactly, dragged on the ruler.
  const double a = static_cast<double>(Synthetic::kFirstStep + Synthetic::kStepNs);
  const double b = a + static_cast<double>(Synthetic::kStepNs);
  const int xa = static_cast<int>(std::lround(v_->xOf(a))), xb = static_cast<int>(std::lround(v_->xOf(b)));
  QSignalSpy spy(v_, &TimelineView::rangeChanged);
  drag(v_, QPoint(xa, 10), QPoint(xb, 10));
  QVERIFY(v_->hasRangeSelection());
  QVERIFY(std::abs(static_cast<double>(v_->rangeStart()) - a) <= v_->nsPerPixel());
  QVERIFY(std::abs(static_cast<double>(v_->rangeEnd()) - b) <= v_->nsPerPixel());
  QVERIFY(!spy.isEmpty());
  const QString text = w_->detailsPanel()->text();
  QVERIFY2(text.contains(QStringLiteral("duration: ")), qPrintable(text));
  QVERIFY2(text.contains(QStringLiteral("Stream 7: busy ")), qPrintable(text));
  // Shift+drag on the tracks measures too; a plain click on the ruler clears it.
  drag(v_, QPoint(xa, 300), QPoint(xa + 50, 300), Qt::ShiftModifier);
  QVERIFY(v_->hasRangeSelection());
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, QPoint(xa + 10, 10));
  QVERIFY(!v_->hasRangeSelection());
}

void ViewTest::groupsCollapseAndExpand() {
  auto gemms = events_named(*w_->timeline(), "gemm_kernel");
  centre(gemms[5], 1e6);
  QVERIFY(v_->eventPosition(gemms[5]).x() > 0);
  // The GPU group's header is the first row under the ruler.
  const QPoint header(20, TimelineView::kRulerHeight + TimelineView::kGroupHeight / 2);
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, header);
  QVERIFY(v_->groupCollapsed(0));
  QCOMPARE(v_->eventPosition(gemms[5]), QPoint(-1, -1));
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, header);
  QVERIFY(!v_->groupCollapsed(0));
  QVERIFY(v_->eventPosition(gemms[5]).x() > 0);
}

void ViewTest::tableRowHighlightsAndJumpsToTheLongest() {
  SummaryTable* t = w_->kernelTable();
  w_->bottomTabs()->setCurrentWidget(t);
  QTableView* view = t->view();
  view->sortByColumn(NameSummaryModel::kTotal, Qt::DescendingOrder);
  const QModelIndex first = view->model()->index(0, NameSummaryModel::kName);
  QCOMPARE(first.data().toString(), QStringLiteral("gemm_kernel"));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, view->visualRect(first).center());
  QCOMPARE(w_->highlight().count(), size_t(Synthetic::kSteps * Synthetic::kIterations));
  const EventRef sel = v_->selected();
  QVERIFY(sel.valid());
  QCOMPARE(sel.event().duration(), Synthetic::gemm_ns(Synthetic::kIterations - 1));
  QVERIFY(v_->eventPosition(sel).x() > 0);
  // The filter narrows the table.
  QTest::keyClicks(t->filter(), QStringLiteral("relu"));
  QCOMPARE(view->model()->rowCount(), 1);
  t->filter()->clear();
}

void ViewTest::findingsPanel() {
  FindingsPanel* f = w_->findingsPanel();
  if (!have_analyzer()) QCOMPARE(f->status(), QStringLiteral("analyzer not built"));
  FindingItem item;
  item.id = "dataloader_wait";
  item.title = "GPU idle while the DataLoader loads";
  item.severity = "high";
  item.evidence = {{Synthetic::kFirstStep + 1'000'000, Synthetic::kFirstStep + 20'000'000, "step 0", -1, Synthetic::kPid}};
  f->model()->set({item});
  QTableView* view = f->table()->view();
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier,
                    view->visualRect(view->model()->index(0, FindingsModel::kTitle)).center());
  QCOMPARE(v_->rangeStart(), item.evidence[0].start);
  QCOMPARE(v_->rangeEnd(), item.evidence[0].end);
  QVERIFY(v_->viewStart() < static_cast<double>(item.evidence[0].start));
  QVERIFY(v_->viewEnd() > static_cast<double>(item.evidence[0].end));
  // One process: no bands, the range selection shows the evidence (as before).
  QVERIFY(v_->evidence().empty());
  QVERIFY(!w_->alignStepsAction()->isEnabled());
  QVERIFY(v_->viewEnd() - v_->viewStart() < 2 * 19e6);
}

void ViewTest::asyncOpenAndRecentFiles() {
  QSignalSpy done(w_, &MainWindow::loadFinished);
  w_->openFile(db_);
  QVERIFY(done.wait(20000));
  QCOMPARE(w_->timeline()->event_count(), int64_t{Synthetic::kSteps} * (Synthetic::kIterations * 8 + 2));
  v_ = w_->timelineView();
  QCOMPARE(w_->recentFiles().value(0), QFileInfo(db_).absoluteFilePath());
  QCOMPARE(w_->kernelTable()->view()->model()->rowCount(), 2);
}

void ViewTest::dropOpensAFile() {
  const QString copy = dir_.filePath(QStringLiteral("dropped.db"));
  QVERIFY(QFile::copy(db_, copy));
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(copy)});
  QDragEnterEvent enter(QPoint(300, 300), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w_, &enter);
  QVERIFY(enter.isAccepted());
  QSignalSpy done(w_, &MainWindow::loadFinished);
  QDropEvent drop(QPointF(300, 300), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(w_, &drop);
  QVERIFY(done.wait(20000));
  QCOMPARE(w_->recentFiles().value(0), QFileInfo(copy).absoluteFilePath());
  QVERIFY(w_->windowTitle().startsWith(QStringLiteral("dropped.db")));
}

void ViewTest::badFilesGiveADialogAndKeepTheViewer() {
  const Timeline* before = w_->timeline();
  const int64_t events = before->event_count();
  const QString garbage = dir_.filePath(QStringLiteral("garbage.db"));
  test::write_garbage(garbage.toStdString());
  const QString newer = dir_.filePath(QStringLiteral("newer.db"));
  test::write_newer_schema(newer.toStdString());
  for (const auto& [path, reason] : {std::pair{garbage, QStringLiteral("not a gpuscope recording")},
                                     std::pair{newer, QStringLiteral("newer gpuscope")}}) {
    QSignalSpy failed(w_, &MainWindow::loadFailed);
    w_->openFile(path);
    QVERIFY(failed.wait(20000));
    auto* box = w_->findChild<QMessageBox*>(QStringLiteral("openErrorDialog"));
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QVERIFY2(box->text().startsWith(path + QStringLiteral(": ")), qPrintable(box->text()));
    QVERIFY2(box->text().contains(reason), qPrintable(box->text()));
    QVERIFY(w_->isVisible());
    QCOMPARE(w_->timeline(), before);  // the open recording stays
    QCOMPARE(w_->timeline()->event_count(), events);
    box->accept();
    QTRY_VERIFY(!w_->findChild<QMessageBox*>(QStringLiteral("openErrorDialog")));
  }
}

QTEST_MAIN(ViewTest)
#include "view_test.moc"
