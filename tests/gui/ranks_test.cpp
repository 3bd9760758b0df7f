// Recordings of a distributed job in the viewer (model/ranks.cpp and its use
// by the timeline, the view and the window): rank groups in rank order with
// the analyzer's numbers in their titles, steps aligned across ranks and true
// time with the toggle off, clicks, search and details in shifted rows, and
// the cross-rank findings with their evidence on the right rank's rows. On a
// synthetic job with known skews and on the real 4-rank gloo recording.
#include <QAction>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "gui/model/findings_source.h"
#include "gui/model/format.h"
#include "gui/model/ranks.h"
#include "tests/gui/synthetic_recording.h"
#include "tests/analyzer/recorded_data.h"
#include "gui/view/details_panel.h"
#include "gui/view/main_window.h"
#include "gui/view/search_bar.h"
#include "gui/view/tables_panel.h"
#include "gui/view/timeline_view.h"

using namespace gpuscope::gui;
using test::SyntheticRanks;
using S = SyntheticRanks;

namespace {

const Timeline::Group* group_of_pid(const Timeline& tl, int64_t pid) {
  for (const auto& g : tl.groups())
    if (g.pid == pid) return &g;
  return nullptr;
}

const Track* step_lane(const Timeline& tl, int64_t pid) {
  const Timeline::Group* g = group_of_pid(tl, pid);
  if (!g) return nullptr;
  for (const Track* t : g->tracks)
    if (t->type == TrackType::kSteps) return t;
  return nullptr;
}

std::vector<EventRef> events_named(const Timeline& tl, const std::string& name, int64_t pid) {
  std::vector<EventRef> out;
  for (const auto& g : tl.groups())
    for (const Track* t : g.tracks)
      for (uint32_t l = 0; l < t->lanes.size(); ++l)
        for (uint32_t k = 0; k < t->lanes[l].events.size(); ++k)
          if (t->pid == pid && tl.name(t->lanes[l].events[k].name) == name) out.push_back({t, l, k});
  std::sort(out.begin(), out.end(), [](const EventRef& a, const EventRef& b) { return a.event().start < b.event().start; });
  return out;
}

// The finding of rule `id` in the panel's list, as a row of its table.
int finding_row(FindingsPanel* panel, const std::string& id) {
  for (int r = 0; r < panel->model()->rowCount(); ++r)
    if (panel->model()->row(r).id == id) return r;
  return -1;
}

void activate_finding(FindingsPanel* panel, int source_row) {
  QTableView* view = panel->table()->view();
  const QModelIndex index = panel->table()->proxy()->mapFromSource(panel->model()->index(source_row, FindingsModel::kTitle));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, Qt::NoModifier, view->visualRect(index).center());
}

double pixel_distance(QRgb a, QRgb b) {
  return std::max({std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
}

}  // namespace

class RanksTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void alignmentIsTheMedianSkew();
  void groupsInRankOrderWithTheirNumbers();
  void findingsNameTheRankAndItsRows();
  void stepsStartTogetherWhenAligned();
  void trueTimeWithTheToggleOff();
  void clicksSearchAndDetailsInShiftedRows();
  void findingShowsItsEvidenceOnTheRanksRows();
  void realFourRankRecording();
  void cleanupTestCase();

 private:
  QTemporaryDir dir_;
  MainWindow* w_ = nullptr;
  TimelineView* v_ = nullptr;
};

void RanksTest::initTestCase() {
  const QString db = dir_.filePath(QStringLiteral("ranks.db"));
  test::write_synthetic_ranks(db.toStdString());
  w_ = new MainWindow;
  w_->resize(1400, 1000);
  w_->show();
  QVERIFY(QTest::qWaitForWindowExposed(w_));
  QString error;
  QVERIFY2(w_->openBlocking(db, &error), qPrintable(error));
  v_ = w_->timelineView();
  if (!have_analyzer()) QSKIP("analyzer not built: no rank summaries nor cross-rank findings");
}

void RanksTest::cleanupTestCase() { delete w_; }

void RanksTest::alignmentIsTheMedianSkew() {
  // Rank 1 runs 3 ms behind rank 0 but started its first step 9 ms behind,
  // and recorded a step rank 0 did not; rank 2 recorded no steps.
  std::vector<ProcessInfo> procs(4);
  procs[0].pid = 9;  // the launcher
  procs[1].pid = 10, procs[1].rank = 0;
  procs[2].pid = 11, procs[2].rank = 1;
  procs[3].pid = 12, procs[3].rank = 2;
  std::vector<StepMarker> steps;
  for (int k = 0; k < 7; ++k) {
    steps.push_back({10, k, 1'000'000'000 + k * 50'000'000, 1'000'000'000 + (k + 1) * 50'000'000});
    const int64_t behind = k == 0 ? 9'000'000 : 3'000'000;
    steps.push_back({11, k, steps[steps.size() - 1].start + behind, steps[steps.size() - 1].end + 3'000'000});
  }
  steps.push_back({11, 7, 2'000'000'000, 2'050'000'000});
  StepAlignment a = align_steps(procs, steps);
  QCOMPARE(a.reference_rank, int64_t(0));
  QCOMPARE(a.reference_pid, int64_t(10));
  QCOMPARE(a.shifts.size(), size_t(2));
  QCOMPARE(a.offset(10), int64_t(0));
  QCOMPARE(a.offset(11), int64_t(-3'000'000));  // the median, not the first step's 9 ms
  QCOMPARE(a.find(11)->shared_steps, int64_t(7));
  QCOMPARE(a.find(11)->max_residual, int64_t(6'000'000));
  QCOMPARE(a.offset(12), int64_t(0));
  QCOMPARE(a.offset(9), int64_t(0));
  // The reference is the lowest rank that has steps.
  procs[1].rank = 5;
  a = align_steps(procs, steps);
  QCOMPARE(a.reference_rank, int64_t(1));
  QCOMPARE(a.offset(10), int64_t(3'000'000));
  // One rank with steps, or one ranked process: nothing to align.
  std::vector<StepMarker> one(steps.begin(), steps.end());
  one.erase(std::remove_if(one.begin(), one.end(), [](const StepMarker& s) { return s.pid == 11; }), one.end());
  QVERIFY(align_steps(procs, one).shifts.empty());
  procs[2].rank = procs[3].rank = -1;
  QVERIFY(!is_multi_rank(procs));
  QVERIFY(align_steps(procs, steps).shifts.empty());
}

void RanksTest::groupsInRankOrderWithTheirNumbers() {
  const Timeline& tl = *w_->timeline();
  QVERIFY(tl.multi_rank());
  // Process groups: the ranks by rank (their pids are not in that order), then the launcher.
  std::vector<int64_t> pids;
  for (const auto& g : tl.groups())
    if (g.pid >= 0) pids.push_back(g.pid);
  QCOMPARE(pids, (std::vector<int64_t>{S::kPid[0], S::kPid[1], S::kPid[2], S::kPid[3], S::kLauncherPid}));
  QCOMPARE(tl.ranks().size(), size_t(S::kRanks));
  for (int r = 0; r < S::kRanks; ++r) {
    const Timeline::Group* g = group_of_pid(tl, S::kPid[r]);
    QVERIFY(g);
    QCOMPARE(g->rank, int64_t(r));
    const RankItem& item = tl.ranks()[static_cast<size_t>(r)];
    QCOMPARE(item.pid, S::kPid[r]);
    // Every rank's step lasts as long: the last arrival's work and the transfer.
    QVERIFY2(std::abs(item.step_ms_median - static_cast<double>(S::kStepNs) / 1e6) < 0.5, qPrintable(QString::number(item.step_ms_median)));
    const QString title = QString::fromStdString(g->title());
    const QString want = QStringLiteral("rank %1 · node%2 · pid %3 · step %4 median, ")
                             .arg(r)
                             .arg(r < 2 ? 0 : 1)
                             .arg(S::kPid[r])
                             .arg(QString::fromStdString(format_duration(item.step_ms_median * 1e6)));
    QVERIFY2(title.startsWith(want), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("waits %1/step in collectives").arg(QString::fromStdString(format_duration(item.collective_ms_per_step * 1e6)))),
             qPrintable(title));
    // The straggler waits little and loads long; the others wait for it.
    if (r == S::kStraggler) {
      QVERIFY(g->flagged);
      QVERIFY2(title.endsWith(QStringLiteral(" · straggler")), qPrintable(title));
      QVERIFY(item.data_ms_per_step > 19.0 && item.collective_ms_per_step < 2.0);
    } else {
      QVERIFY(!g->flagged);
      QVERIFY(!title.contains(QStringLiteral("straggler")));
      QVERIFY(item.collective_ms_per_step > 18.0 && item.data_ms_per_step < 1.0);
    }
    // Its step lane tops the group, one box per recorded step.
    QCOMPARE(g->tracks.front()->type, TrackType::kSteps);
    QCOMPARE(g->tracks.front()->steps.size(), size_t(S::kSteps));
  }
  QVERIFY(QString::fromStdString(group_of_pid(tl, S::kLauncherPid)->title()).startsWith(QStringLiteral("Process 300 · python3")));
}

void RanksTest::findingsNameTheRankAndItsRows() {
  FindingsPanel* panel = w_->findingsPanel();
  const int straggler = finding_row(panel, "straggler"), wait = finding_row(panel, "collective-wait");
  QVERIFY(straggler >= 0 && wait >= 0);
  const FindingItem& f = panel->model()->row(straggler);
  QCOMPARE(f.rank, int64_t(S::kStraggler));
  QVERIFY2(QString::fromStdString(f.summary).startsWith(QStringLiteral("Rank 2 is the straggler")), f.summary.c_str());
  QCOMPARE(FindingsModel::title(f), QStringLiteral("One rank is slower and the others wait for it — rank 2"));
  // Its evidence: the straggler's own slowest steps, on its process.
  QVERIFY(!f.evidence.empty());
  for (const EvidenceRange& e : f.evidence) {
    QCOMPARE(e.rank, int64_t(S::kStraggler));
    QCOMPARE(e.pid, S::kPid[S::kStraggler]);
    bool is_step = false;
    for (int k = 0; k < S::kSteps; ++k)
      is_step = is_step || (e.start == S::step_start(S::kStraggler, k) && e.end == S::step_end(S::kStraggler, k));
    QVERIFY2(is_step, e.label.c_str());
  }
  // collective-wait: the ranks that wait, each range on its own rank's process.
  const FindingItem& w = panel->model()->row(wait);
  QCOMPARE(w.rank, int64_t(S::kStraggler));  // the last to arrive
  std::vector<int64_t> ranks;
  for (const EvidenceRange& e : w.evidence) {
    QVERIFY(e.rank >= 0 && e.rank < S::kRanks);
    QCOMPARE(e.pid, S::kPid[e.rank]);
    QCOMPARE(rank_in_label(e.label), e.rank);
    ranks.push_back(e.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  QCOMPARE(ranks, (std::vector<int64_t>{0, 1, 3}));
  QCOMPARE(rank_in_label("rank 12: step 3, 100 us"), int64_t(12));
  QCOMPARE(rank_in_label("step 3, 100 us"), int64_t(-1));
  QCOMPARE(rank_in_label("rank x: step 3"), int64_t(-1));
}

void RanksTest::stepsStartTogetherWhenAligned() {
  QVERIFY(w_->alignStepsAction()->isEnabled());
  QVERIFY(w_->alignStepsAction()->isChecked());
  QVERIFY(v_->stepsAligned());
  const Timeline& tl = *w_->timeline();
  QCOMPARE(tl.alignment().reference_rank, int64_t(0));
  for (int r = 0; r < S::kRanks; ++r) {
    const int64_t shift = v_->shiftOfPid(S::kPid[r]);
    // The clock skew undone, to within the jitter of the step starts; rank 1's
    // late first step does not decide it.
    QVERIFY2(std::abs(shift + S::kSkewNs[r]) <= 2 * S::kMaxJitterNs, qPrintable(QString::number(shift)));
    if (r == 1) QVERIFY(std::abs(shift - (S::step_start(0, 0) - S::step_start(1, 0))) > S::kLateFirstStepNs - 2 * S::kMaxJitterNs);
    for (const Track* t : group_of_pid(tl, S::kPid[r])->tracks) QCOMPARE(v_->shiftOf(t), shift);
    for (int k = 1; k < S::kSteps; ++k)
      QVERIFY(std::abs(S::step_start(r, k) + shift - S::step_start(0, k)) <= 2 * S::kMaxJitterNs);
  }
  // On screen: just right of where rank 0's step k starts, every rank's step lane shows step k.
  v_->setRange(static_cast<double>(S::step_start(0, 2)) - 5e6, static_cast<double>(S::step_start(0, 6)));
  const double px = 2.0 * S::kMaxJitterNs / v_->nsPerPixel() + 2;
  QVERIFY(px < 8);
  for (int k = 2; k < 6; ++k) {
    const int x = static_cast<int>(std::ceil(v_->xOf(static_cast<double>(S::step_start(0, k))) + px));
    for (int r = 0; r < S::kRanks; ++r) {
      const QRect row = v_->trackRect(step_lane(tl, S::kPid[r]));
      QVERIFY2(!row.isEmpty() && row.bottom() < v_->height(), qPrintable(QStringLiteral("rank %1's step lane off screen").arg(r)));
      const StepMarker* s = v_->stepAt(QPoint(x, row.center().y()));
      QVERIFY2(s && s->number == k && s->pid == S::kPid[r], qPrintable(QStringLiteral("rank %1, step %2").arg(r).arg(k)));
    }
  }
  // And painted there: 2.5 ms into rank 0's step k (where rank 3's true step k
  // has not begun) every rank's lane has step k's box, whose colour alternates
  // with the step number (sampled on its top edge, above the label).
  QImage img(v_->size(), QImage::Format_ARGB32_Premultiplied);
  v_->render(img);
  for (int k = 2; k < 5; ++k) {
    const int x = static_cast<int>(v_->xOf(static_cast<double>(S::step_start(0, k)) + 2.5e6));
    const QRgb want = (k & 1) ? qRgb(150, 110, 190) : qRgb(120, 70, 165);
    for (int r = 0; r < S::kRanks; ++r) {
      const QRect row = v_->trackRect(step_lane(tl, S::kPid[r]));
      QCOMPARE(QColor(img.pixel(x, row.top() + TimelineView::kTrackPad + 2)), QColor(want));
    }
  }
  // The ruler numbers the reference rank's steps (its rows are never shifted).
  QCOMPARE(v_->shiftOfPid(S::kPid[0]), int64_t(0));
}

void RanksTest::trueTimeWithTheToggleOff() {
  const Timeline& tl = *w_->timeline();
  w_->alignStepsAction()->trigger();
  QVERIFY(!w_->alignStepsAction()->isChecked());
  QVERIFY(!v_->stepsAligned());
  v_->setRange(static_cast<double>(S::step_start(0, 2)) - 8e6, static_cast<double>(S::step_start(0, 6)));
  for (int r = 0; r < S::kRanks; ++r) {
    for (const Track* t : group_of_pid(tl, S::kPid[r])->tracks) QCOMPARE(v_->shiftOf(t), int64_t(0));
    const int y = v_->trackRect(step_lane(tl, S::kPid[r])).center().y();
    for (int k = 2; k < 6; ++k) {
      // Each step where it was recorded: it starts at its true time ...
      const double x = v_->xOf(static_cast<double>(S::step_start(r, k)));
      const StepMarker* in = v_->stepAt(QPoint(static_cast<int>(std::ceil(x + 1)), y));
      QVERIFY(in && in->number == k);
      const StepMarker* before = v_->stepAt(QPoint(static_cast<int>(std::floor(x - 3)), y));
      QVERIFY(before && before->number == k - 1);
    }
  }
  // ... so rank 3, 5 ms behind, is still in its step k - 1 where rank 0's step k begins.
  const int x = static_cast<int>(std::ceil(v_->xOf(static_cast<double>(S::step_start(0, 4))) + 4));
  const StepMarker* s = v_->stepAt(QPoint(x, v_->trackRect(step_lane(tl, S::kPid[3])).center().y()));
  QVERIFY(s && s->number == 3);
  w_->alignStepsAction()->trigger();
  QVERIFY(v_->stepsAligned());
}

void RanksTest::clicksSearchAndDetailsInShiftedRows() {
  const Timeline& tl = *w_->timeline();
  const int64_t pid = S::kPid[3];
  const auto enqueues = events_named(tl, "c10d::allreduce_", pid);
  QCOMPARE(enqueues.size(), size_t(S::kSteps));
  const EventRef op = enqueues[4];
  const int64_t shift = v_->shiftOfPid(pid);
  QVERIFY(shift < -4'000'000);
  const double mid = static_cast<double>(op.event().start + op.event().end) / 2 + static_cast<double>(shift);
  v_->setRange(mid - 1e6, mid + 1e6);
  const QPoint pos = v_->eventPosition(op);
  QVERIFY(pos.x() > 0);
  QCOMPARE(pos.x(), static_cast<int>(std::lround(v_->xOf(mid))));
  v_->revealGroup(static_cast<int>(group_of_pid(tl, pid) - tl.groups().data()));
  const QPoint at = v_->eventPosition(op);
  QVERIFY(at.y() > 0);
  QTest::mouseClick(v_, Qt::LeftButton, Qt::NoModifier, at);
  QVERIFY(v_->selected() == op);
  // The details give the true times and say where the event is drawn.
  const QString text = w_->detailsPanel()->text();
  QVERIFY2(text.contains(QStringLiteral("(%1 ns)").arg(op.event().start)), qPrintable(text));
  QVERIFY2(text.contains(QStringLiteral("drawn shifted: ")) && text.contains(QStringLiteral("to align steps with rank 0")), qPrintable(text));
  // The same event in true time: no longer under the cursor, and no shift in the details.
  w_->alignStepsAction()->trigger();
  QVERIFY(v_->eventAt(at) != op);
  QVERIFY(!w_->detailsPanel()->text().contains(QStringLiteral("drawn shifted")));
  w_->alignStepsAction()->trigger();
  QVERIFY(v_->eventAt(at) == op);
  // Search walks the matches and brings each on screen where it is drawn.
  SearchBar* s = w_->searchBar();
  s->edit()->clear();
  QTest::keyClicks(s->edit(), QStringLiteral("c10d::allreduce_"));
  QTest::keyClick(s->edit(), Qt::Key_Return);
  QCOMPARE(w_->highlight().count(), size_t(S::kRanks * S::kSteps));
  for (int i = 0; i < 6; ++i) {
    const EventRef sel = v_->selected();
    QVERIFY(sel.valid());
    const QPoint p = v_->eventPosition(sel);
    QVERIFY2(p.x() > 0, qPrintable(QStringLiteral("match %1 off screen").arg(i)));
    QVERIFY(v_->eventAt(p) == sel);
    QTest::keyClick(s->edit(), Qt::Key_Return);
  }
  s->edit()->clear();
  QTest::keyClick(s->edit(), Qt::Key_Return);
  QVERIFY(w_->highlight().empty());
  // So does an op's row in the table: all its instances stay lit, the longest selected.
  SummaryTable* ops = w_->opTable();
  w_->bottomTabs()->setCurrentWidget(ops);
  QTest::keyClicks(ops->filter(), QStringLiteral("c10d"));
  QCOMPARE(ops->view()->model()->rowCount(), 1);
  QTest::mouseClick(ops->view()->viewport(), Qt::LeftButton, Qt::NoModifier,
                    ops->view()->visualRect(ops->view()->model()->index(0, NameSummaryModel::kName)).center());
  QCOMPARE(w_->highlight().count(), size_t(S::kRanks * S::kSteps));
  QVERIFY(v_->eventPosition(v_->selected()).x() > 0);
  ops->filter()->clear();
  v_->select({});
}

void RanksTest::findingShowsItsEvidenceOnTheRanksRows() {
  const Timeline& tl = *w_->timeline();
  FindingsPanel* panel = w_->findingsPanel();
  w_->bottomTabs()->setCurrentWidget(panel);
  v_->fitAll();
  activate_finding(panel, finding_row(panel, "straggler"));
  const FindingItem& f = panel->model()->row(finding_row(panel, "straggler"));
  const int64_t pid = S::kPid[S::kStraggler], shift = v_->shiftOfPid(pid);
  QCOMPARE(v_->evidence().size(), f.evidence.size());
  for (const auto& b : v_->evidence()) QCOMPARE(b.pid, pid);
  // The view went to the first range, drawn where the straggler's rows are.
  QCOMPARE(v_->rangeStart(), f.evidence[0].start + shift);
  QCOMPARE(v_->rangeEnd(), f.evidence[0].end + shift);
  const auto rects = v_->evidenceRects();
  QVERIFY(!rects.empty());
  std::set<const Track*> rows;
  bool header = false;
  for (const auto& r : rects) {
    if (r.track) {
      QCOMPARE(r.track->pid, pid);
      rows.insert(r.track);
    } else {
      QCOMPARE(tl.groups()[static_cast<size_t>(r.group)].pid, pid);
      header = true;
    }
  }
  QVERIFY(header);
  QCOMPARE(rows.size(), group_of_pid(tl, pid)->tracks.size());  // every row of the rank, none of the others
  // Drawn: a pixel of the band on the straggler's main thread changes, the same x on rank 0's does not.
  const Track* main_thread = events_named(tl, "aten::linear", pid)[0].track;
  QRectF band;
  for (const auto& r : rects)
    if (r.track == main_thread && r.band == 0) band = r.rect;
  QVERIFY(!band.isEmpty());
  const int x = static_cast<int>(band.center().x());
  const int y_straggler = v_->trackRect(main_thread).bottom() - 2;
  const Track* rank0 = events_named(tl, "aten::linear", S::kPid[0])[0].track;
  const int y_rank0 = v_->trackRect(rank0).bottom() - 2;
  QImage with(v_->size(), QImage::Format_ARGB32_Premultiplied), without(v_->size(), QImage::Format_ARGB32_Premultiplied);
  v_->render(with);
  const auto bands = v_->evidence();
  v_->setEvidence({});
  v_->render(without);
  v_->setEvidence(bands);
  if (y_rank0 > 0 && y_rank0 < v_->height())
    QCOMPARE(with.pixel(x, y_rank0), without.pixel(x, y_rank0));
  QVERIFY(y_straggler > 0 && y_straggler < v_->height());
  QVERIFY(pixel_distance(with.pixel(x, y_straggler), without.pixel(x, y_straggler)) > 10);
  // collective-wait: bands on the waiting ranks' rows only.
  activate_finding(panel, finding_row(panel, "collective-wait"));
  std::set<int64_t> pids;
  for (const auto& b : v_->evidence()) pids.insert(b.pid);
  QCOMPARE(pids, (std::set<int64_t>{S::kPid[0], S::kPid[1], S::kPid[3]}));
  // Esc clears them.
  v_->setFocus();
  QTest::keyClick(v_, Qt::Key_Escape);
  QVERIFY(v_->evidence().empty());
}

void RanksTest::realFourRankRecording() {
  const std::filesystem::path packed = std::filesystem::path(GPUSCOPE_SOURCE_DIR) / "tests/data/ddp_gloo_4ranks_cpu.db.zst";
  if (!std::filesystem::exists(packed)) QSKIP("ddp_gloo_4ranks_cpu.db.zst not in tests/data");
  MainWindow w;
  w.resize(1400, 1000);
  QString error;
  QVERIFY2(w.openBlocking(QString::fromStdString(gpuscope::testing::readable_recording(packed)), &error), qPrintable(error));
  const Timeline& tl = *w.timeline();
  QVERIFY(tl.multi_rank());
  const std::vector<int64_t> rank_pids{3102, 3103, 3104, 3106};
  std::vector<int64_t> pids;
  for (const auto& g : tl.groups())
    if (g.pid >= 0) pids.push_back(g.pid);
  QCOMPARE(pids, (std::vector<int64_t>{3102, 3103, 3104, 3106, 3096}));  // ranks, then torchrun
  // Rank 3 loads its data slowly (15 ms a step against 5): the analyzer names it, its group is marked.
  for (int r = 0; r < 4; ++r) {
    const Timeline::Group* g = group_of_pid(tl, rank_pids[static_cast<size_t>(r)]);
    const QString title = QString::fromStdString(g->title());
    QVERIFY2(title.startsWith(QStringLiteral("rank %1 · vm · pid %2 · step ").arg(r).arg(rank_pids[static_cast<size_t>(r)])), qPrintable(title));
    QVERIFY2(title.contains(QStringLiteral("/step in collectives · data ")), qPrintable(title));
    QCOMPARE(g->flagged, r == 3);
  }
  FindingsPanel* panel = w.findingsPanel();
  const int straggler = finding_row(panel, "straggler"), wait = finding_row(panel, "collective-wait");
  QVERIFY(straggler >= 0 && wait >= 0);
  QCOMPARE(panel->model()->row(straggler).rank, int64_t(3));
  for (const auto& e : panel->model()->row(straggler).evidence) QCOMPARE(e.pid, int64_t(3106));
  for (const auto& e : panel->model()->row(wait).evidence) {
    QVERIFY(e.pid == 3102 || e.pid == 3103 || e.pid == 3104);
    QCOMPARE(e.pid, rank_pids[static_cast<size_t>(e.rank)]);
  }
  // One host: the ranks start their steps together already; aligned, step k of
  // every rank starts within a millisecond of rank 0's for nearly all steps.
  QCOMPARE(tl.alignment().shifts.size(), size_t(4));
  for (const RankShift& s : tl.alignment().shifts) {
    QVERIFY(std::abs(s.offset) < 1'000'000);
    QCOMPARE(s.shared_steps, int64_t(42));
    std::map<int64_t, int64_t> ref;
    for (const auto& m : tl.steps())
      if (m.pid == 3102) ref[m.number] = m.start;
    int close = 0;
    for (const auto& m : tl.steps())
      if (m.pid == s.pid && std::abs(m.start + s.offset - ref[m.number]) < 1'000'000) ++close;
    QVERIFY2(close >= 36, qPrintable(QStringLiteral("pid %1: %2 of 42 steps within 1 ms").arg(s.pid).arg(close)));
  }
  // The straggler finding lights up rank 3's rows.
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  activate_finding(panel, straggler);
  const auto rects = w.timelineView()->evidenceRects();
  QVERIFY(!rects.empty());
  for (const auto& r : rects) QCOMPARE(r.track ? r.track->pid : tl.groups()[static_cast<size_t>(r.group)].pid, int64_t(3106));
}

QTEST_MAIN(RanksTest)
#include "ranks_test.moc"
