// The viewer against the report (issue 41): on a planted launch-bound
// recording (tests/analyzer/scenarios.h) the findings panel's Saving column
// says per step what `analyze` says, the panel shows the report's plan, and
// the timeline opens on the analysed steps with the whole recording one key
// (0) away and the analysed steps back on Home.
#include <QLabel>
#include <QTemporaryDir>
#include <QtTest>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "analyzer/report/format.h"
#include "trace_formats/common/text.h"
#include "trace_formats/store/reader.h"
#include "tests/analyzer/scenarios.h"
#include "gui/view/main_window.h"
#include "gui/view/tables_panel.h"
#include "gui/view/timeline_view.h"

using namespace gpuscope;
using namespace gpuscope::gui;

class FindingsViewTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void savingColumnIsTheReportsPerStepFigure();
  void panelShowsTheReportsPlan();
  void opensOnTheAnalysedSteps();
  void zeroShowsTheWholeRecordingAndHomeTheAnalysedSteps();
  void asyncOpenLandsOnTheAnalysedStepsToo();
  void cleanupTestCase();

 private:
  QTemporaryDir dir_;
  std::string db_;
  analyzer::Analysis report_;
  MainWindow* w_ = nullptr;
  TimelineView* v_ = nullptr;
};

void FindingsViewTest::initTestCase() {
  QVERIFY(have_analyzer());
  db_ = dir_.filePath(QStringLiteral("launch_bound.db")).toStdString();
  testing::write_scenario("launch-bound", true, db_);
  store::Reader reader(db_);
  report_ = analyzer::analyze(reader, {});
  QVERIFY(!report_.findings.empty());
  QVERIFY(report_.steps.size() >= 2);
  QVERIFY(report_.summary.steps > 1);  // a per-step saving and the total over the steps differ
  w_ = new MainWindow;
  w_->resize(1400, 900);
  w_->show();
  QVERIFY(QTest::qWaitForWindowExposed(w_));
  QString error;
  QVERIFY2(w_->openBlocking(QString::fromStdString(db_), &error, true), qPrintable(error));
  v_ = w_->timelineView();
}

void FindingsViewTest::cleanupTestCase() { delete w_; }

void FindingsViewTest::savingColumnIsTheReportsPerStepFigure() {
  FindingsModel* m = w_->findingsPanel()->model();
  QCOMPARE(m->rowCount(), static_cast<int>(report_.findings.size()));
  const std::string text = analyzer::to_text(report_);
  for (int r = 0; r < m->rowCount(); ++r) {
    const analyzer::Finding* f = nullptr;
    for (const auto& g : report_.findings)
      if (g.id == m->row(r).id) f = &g;
    QVERIFY(f);
    const std::string per_step = analyzer::report::ms_unit(f->saving_ms_per_step);
    const std::string pct = format_fixed(f->saving_pct, 1);
    // The report's line, and the column's cell, carry the same figures.
    QVERIFY2(text.find("estimated saving " + per_step + " per step (" + pct + " %)") != std::string::npos,
             text.c_str());
    QCOMPARE(m->data(m->index(r, FindingsModel::kSaving)).toString(),
             QString::fromStdString(per_step + " (" + pct + " %)"));
  }
  QCOMPARE(m->headerData(FindingsModel::kSaving, Qt::Horizontal, Qt::DisplayRole).toString(),
           QStringLiteral("Saving / step"));
}

void FindingsViewTest::panelShowsTheReportsPlan() {
  QVERIFY2(report_.whatif.available, report_.whatif.unavailable.c_str());
  const QString plan = w_->findingsPanel()->plan();
  QVERIFY(plan.startsWith(QStringLiteral("Plan: ")));
  QVERIFY(plan.contains(QString::fromStdString(analyzer::report::whatif_check_line(report_))));
  for (const auto& line : analyzer::report::plan_lines(report_))
    QVERIFY2(plan.contains(QString::fromStdString(line)), qPrintable(plan));
  QVERIFY(w_->findingsPanel()->findChild<QLabel*>(QStringLiteral("plan"))->isVisibleTo(w_->findingsPanel()));
}

void FindingsViewTest::opensOnTheAnalysedSteps() {
  const auto a = static_cast<double>(report_.steps.front().start_ns);
  const auto b = static_cast<double>(report_.steps.back().end_ns);
  QVERIFY(v_->hasHomeRange());
  QCOMPARE(v_->homeStart(), a);
  QCOMPARE(v_->homeEnd(), b);
  // The visible window is the analysed steps with a 1 % margin, not the recording.
  const double pad = (b - a) * 0.01, tol = (b - a) * 0.002;
  QVERIFY2(std::abs(v_->viewStart() - (a - pad)) <= tol, qPrintable(QString::number(v_->viewStart())));
  QVERIFY2(std::abs(v_->viewEnd() - (b + pad)) <= tol, qPrintable(QString::number(v_->viewEnd())));
  QVERIFY(!v_->userNavigated());
}

void FindingsViewTest::zeroShowsTheWholeRecordingAndHomeTheAnalysedSteps() {
  const double home_span = v_->viewEnd() - v_->viewStart();
  v_->setFocus();
  QTest::keyClick(v_, Qt::Key_0);
  const double whole_span = v_->viewEnd() - v_->viewStart();
  // The scenario's warm-up steps lie before the analysed ones.
  QVERIFY(v_->viewStart() < v_->homeStart() - 0.01 * home_span);
  QVERIFY(whole_span > home_span * 1.05);
  QTest::keyClick(v_, Qt::Key_Home);
  QCOMPARE(v_->viewEnd() - v_->viewStart(), home_span);
}

void FindingsViewTest::asyncOpenLandsOnTheAnalysedStepsToo() {
  MainWindow w;
  w.resize(1400, 900);
  w.show();
  QSignalSpy done(&w, &MainWindow::loadFinished);
  w.openFile(QString::fromStdString(db_));
  QVERIFY(done.wait(60000));
  QTRY_VERIFY_WITH_TIMEOUT(w.timelineView()->hasHomeRange(), 60000);
  QCOMPARE(w.timelineView()->homeStart(), static_cast<double>(report_.steps.front().start_ns));
  const double span = w.timelineView()->viewEnd() - w.timelineView()->viewStart();
  const double steps = static_cast<double>(report_.steps.back().end_ns - report_.steps.front().start_ns);
  QVERIFY(std::abs(span - steps * 1.02) <= steps * 0.005);
  QCOMPARE(w.findingsPanel()->model()->rowCount(), static_cast<int>(report_.findings.size()));
}

QTEST_MAIN(FindingsViewTest)
#include "findings_view_test.moc"
