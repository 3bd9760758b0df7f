#include "gui/view/main_window.h"

#include <QAction>
#include <QDateTime>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include "gui/model/format.h"
#include "gui/model/search.h"
#include "gui/view/details_panel.h"
#include "gui/view/search_bar.h"
#include "gui/view/tables_panel.h"
#include "gui/view/timeline_view.h"

namespace gpuscope::gui {
namespace {

constexpr int kMaxRecent = 10;
QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("gpuscope"));
  setAcceptDrops(true);
  resize(1400, 860);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  search_ = new SearchBar(central);
  view_ = new TimelineView(central);
  layout->addWidget(search_);
  layout->addWidget(view_, 1);
  setCentralWidget(central);

  details_ = new DetailsPanel(this);
  auto* details_dock = new QDockWidget(QStringLiteral("Details"), this);
  details_dock->setObjectName(QStringLiteral("details"));
  details_dock->setWidget(details_);
  addDockWidget(Qt::RightDockWidgetArea, details_dock);

  findings_ = new FindingsPanel(this);
  kernel_model_ = new NameSummaryModel(this);
  op_model_ = new NameSummaryModel(this);
  memcpy_model_ = new MemcpySummaryModel(this);
  kernel_table_ = new SummaryTable(kernel_model_, NameSummaryModel::kName, NameSummaryModel::kTotal, this);
  op_table_ = new SummaryTable(op_model_, NameSummaryModel::kName, NameSummaryModel::kTotal, this);
  memcpy_table_ = new SummaryTable(memcpy_model_, MemcpySummaryModel::kDirection, MemcpySummaryModel::kTotal, this);
  tabs_ = new QTabWidget(this);
  tabs_->addTab(findings_, QStringLiteral("Findings"));
  tabs_->addTab(kernel_table_, QStringLiteral("Kernels"));
  tabs_->addTab(op_table_, QStringLiteral("Ops"));
  tabs_->addTab(memcpy_table_, QStringLiteral("Memcpys"));
  auto* tables_dock = new QDockWidget(QStringLiteral("Analysis"), this);
  tables_dock->setObjectName(QStringLiteral("analysis"));
  tables_dock->setWidget(tabs_);
  addDockWidget(Qt::BottomDockWidgetArea, tables_dock);
  resizeDocks({details_dock}, {380}, Qt::Horizontal);
  resizeDocks({tables_dock}, {240}, Qt::Vertical);

  status_ = new QLabel(this);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(260);
  progress_->setRange(0, 1000);
  progress_->hide();
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  findings_->setStatus(have_analyzer() ? QString() : QStringLiteral("analyzer not built"));

  connect(view_, &TimelineView::selectionChanged, this, &MainWindow::onSelection);
  connect(view_, &TimelineView::rangeChanged, this, &MainWindow::onRange);
  connect(details_, &DetailsPanel::followRequested, this, [this] { view_->select(details_->linkTarget(), true); });
  connect(search_, &SearchBar::searchChanged, this, &MainWindow::onSearch);
  connect(search_, &SearchBar::nextRequested, this, [this] { stepMatch(true); });
  connect(search_, &SearchBar::prevRequested, this, [this] { stepMatch(false); });
  connect(kernel_table_, &SummaryTable::rowActivated, this, [this](int r) {
    const auto& s = kernel_model_->row(r);
    activateSummary(EventKind::kKernel, s.name, -1, s.longest);
  });
  connect(op_table_, &SummaryTable::rowActivated, this, [this](int r) {
    const auto& s = op_model_->row(r);
    activateSummary(EventKind::kOp, s.name, -1, s.longest);
  });
  connect(memcpy_table_, &SummaryTable::rowActivated, this, [this](int r) {
    const auto& s = memcpy_model_->row(r);
    activateSummary(EventKind::kMemcpy, 0, s.copy_kind, s.longest);
  });
  connect(findings_, &FindingsPanel::findingActivated, this, &MainWindow::onFinding);
  buildMenus();
}

MainWindow::~MainWindow() {
  loader_.reset();  // joins the worker before the timeline goes
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("&Open…"), QKeySequence::Open, this, &MainWindow::showOpenDialog);
  recent_menu_ = file->addMenu(QStringLiteral("Open &Recent"));
  file->addSeparator();
  file->addAction(QStringLiteral("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  // The timeline handles its keys itself (they must work while it has focus);
  // the menu only shows them.
  view->addAction(QStringLiteral("&Whole recording\t0"), view_, &TimelineView::fitAll);
  view->addAction(QStringLiteral("&Analysed steps\tHome"), view_, &TimelineView::showHome);
  view->addAction(QStringLiteral("&Zoom to selection\tF"), view_, &TimelineView::zoomToSelection);
  QAction* find = view->addAction(QStringLiteral("F&ind…"), search_, &SearchBar::focusSearch);
  find->setShortcut(QKeySequence::Find);
  view->addSeparator();
  // Several ranks: each rank's rows shifted so that its step k starts where the
  // reference rank's does (model/ranks.h); off shows every row at its true time.
  align_action_ = view->addAction(QStringLiteral("&Align steps across ranks"));
  align_action_->setObjectName(QStringLiteral("alignSteps"));
  align_action_->setCheckable(true);
  align_action_->setChecked(true);
  align_action_->setEnabled(false);
  align_action_->setToolTip(QStringLiteral("Draw each rank shifted so that its steps start with the first rank's"));
  connect(align_action_, &QAction::toggled, this, [this](bool on) {
    view_->setAlignSteps(on);
    onSelection();
  });
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->addAction(QStringLiteral("&Navigation"), this, [this] {
    QMessageBox::information(
        this, QStringLiteral("Navigation"),
        QStringLiteral("Wheel: zoom at the cursor · Shift+wheel: scroll rows\n"
                       "Drag: pan · Shift+drag or drag on the ruler: measure a range\n"
                       "W / S: zoom in / out · A / D: pan left / right\n"
                       "F: zoom to the selection · Esc: clear\n"
                       "Home: the analysed steps (where the viewer opens) · 0: the whole recording\n"
                       "Click: select (details on the right) · click a group header: collapse\n"
                       "Click a rank's step lane: measure that step on every rank\n"
                       "Ctrl+F: search; Enter / Shift+Enter: next / previous match"));
  });
  refreshRecentMenu();
}

QStringList MainWindow::recentFiles() const {
  return QSettings().value(QStringLiteral("recent")).toStringList();
}

void MainWindow::addRecent(const QString& path) {
  QStringList recent = recentFiles();
  const QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  QSettings().setValue(QStringLiteral("recent"), recent);
  refreshRecentMenu();
}

void MainWindow::refreshRecentMenu() {
  if (!recent_menu_) return;
  recent_menu_->clear();
  const QStringList recent = recentFiles();
  for (const QString& f : recent)
    recent_menu_->addAction(f, this, [this, f] { openFile(f); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::showOpenDialog() {
  const QString dir = path_.isEmpty() ? QString() : QFileInfo(path_).absolutePath();
  QString f = QFileDialog::getOpenFileName(
      this, QStringLiteral("Open recording"), dir,
      QStringLiteral("Recordings (*.db *.json *.json.gz);;gpuscope databases (*.db);;torch.profiler traces (*.json *.json.gz);;All files (*)"));
  if (!f.isEmpty()) openFile(f);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls() && !e->mimeData()->urls().isEmpty() && e->mimeData()->urls().first().isLocalFile())
    e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  const auto urls = e->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  e->acceptProposedAction();
  openFile(urls.first().toLocalFile());
}

void MainWindow::openFile(const QString& path) {
  const int gen = ++generation_;
  loader_ = std::make_unique<Loader>();
  load_started_ms_ = QDateTime::currentMSecsSinceEpoch();
  status_->setText(QStringLiteral("Opening %1…").arg(path));
  progress_->setValue(0);
  progress_->show();
  auto* l = loader_.get();
  connect(l, &Loader::opened, this, [this, gen, path](std::shared_ptr<const RecordingInfo> info) {
    if (gen != generation_) return;
    path_ = path;
    addRecent(path);
    install(std::move(info));
  });
  connect(l, &Loader::batchReady, this, [this, gen](std::shared_ptr<const LoadBatch> b) {
    if (gen == generation_) addBatch(std::move(b));
  });
  connect(l, &Loader::progress, this, [this, gen](qint64 done, qint64 total, const QString& stage) {
    if (gen != generation_) return;
    progress_->setValue(total > 0 ? static_cast<int>(1000 * std::min(done, total) / total) : 0);
    progress_->setFormat(stage + QStringLiteral(" %p%"));
  });
  connect(l, &Loader::findingsReady, this, [this, gen](std::shared_ptr<const FindingsResult> f) {
    if (gen == generation_) setFindings(*f);
  });
  connect(l, &Loader::finished, this, [this, gen] {
    if (gen != generation_) return;
    progress_->hide();
    view_->setMessage(timeline_ && timeline_->event_count() == 0 ? QStringLiteral("No events in this recording")
                                                                 : QString());
    const double secs = static_cast<double>(QDateTime::currentMSecsSinceEpoch() - load_started_ms_) / 1000.0;
    status_->setText(QStringLiteral("%1: %2 events, loaded in %3 s")
                         .arg(path_)
                         .arg(q(format_count(timeline_ ? timeline_->event_count() : 0)))
                         .arg(secs, 0, 'f', 2));
    emit loadFinished();
  });
  connect(l, &Loader::failed, this, [this, gen](const QString& reason) {
    if (gen == generation_) failed(reason);
  });
  if (have_analyzer()) findings_->setStatus(QStringLiteral("analyzing…"));
  l->start(path, have_analyzer());
}

bool MainWindow::openBlocking(const QString& path, QString* error, bool findings) {
  ++generation_;
  loader_.reset();
  auto tl = std::make_unique<Timeline>();
  FindingsResult f;
  try {
    Loader::load_blocking(path.toStdString(), *tl, findings ? &f : nullptr);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return false;
  }
  path_ = path;
  // install() makes a fresh timeline from the info; then the loaded batches move over.
  timeline_ = std::move(tl);
  try {
    details_source_ = std::make_unique<DetailsSource>(timeline_->info()->database, timeline_->strings());
  } catch (const std::exception&) {
    details_source_.reset();
  }
  highlight_.clear();
  highlight_source_ = HighlightSource::kNone;
  view_->setTimeline(timeline_.get());
  align_action_->setEnabled(timeline_->multi_rank());
  view_->setMessage(timeline_->event_count() == 0 ? QStringLiteral("No events in this recording") : QString());
  kernel_model_->set(timeline_->kernel_summary(), timeline_->strings());
  op_model_->set(timeline_->op_summary(), timeline_->strings());
  memcpy_model_->set(timeline_->memcpy_summary());
  if (findings) setFindings(f);
  setWindowTitle(QFileInfo(path).fileName() + QStringLiteral(" — gpuscope"));
  status_->setText(QStringLiteral("%1: %2 events").arg(path, q(format_count(timeline_->event_count()))));
  return true;
}

void MainWindow::install(std::shared_ptr<const RecordingInfo> info) {
  view_->setTimeline(nullptr);
  details_->clear();
  highlight_.clear();
  highlight_source_ = HighlightSource::kNone;
  kernel_model_->set({}, nullptr);
  op_model_->set({}, nullptr);
  memcpy_model_->set({});
  findings_->model()->set({});
  findings_->setPlan({});
  auto tl = std::make_unique<Timeline>();
  tl->reset(info);
  timeline_ = std::move(tl);
  try {
    details_source_ = std::make_unique<DetailsSource>(info->database, info->strings);
  } catch (const std::exception&) {
    details_source_.reset();
  }
  view_->setTimeline(timeline_.get());
  align_action_->setEnabled(timeline_->multi_rank());
  view_->setMessage(QStringLiteral("Loading %1…").arg(QFileInfo(path_).fileName()));
  setWindowTitle(QFileInfo(path_).fileName() + QStringLiteral(" — gpuscope"));
  emit recordingOpened();
}

void MainWindow::addBatch(std::shared_ptr<const LoadBatch> batch) {
  if (!timeline_) return;
  const bool kernels = batch->has_kernel_summary, ops = batch->has_op_summary,
             memcpys = batch->has_memcpy_summary;
  timeline_->add(std::move(batch));
  view_->timelineChanged();
  if (kernels) kernel_model_->set(timeline_->kernel_summary(), timeline_->strings());
  if (ops) op_model_->set(timeline_->op_summary(), timeline_->strings());
  if (memcpys) memcpy_model_->set(timeline_->memcpy_summary());
  // A running search covers the new tracks too.
  if (highlight_source_ == HighlightSource::kSearch) onSearch(search_->pattern(), search_->regex());
  emit batchAdded();
}

void MainWindow::setFindings(const FindingsResult& f) {
  findings_->model()->set(f.findings);
  findings_->setStatus(q(f.status));
  QStringList plan;
  for (const auto& line : f.plan) plan << q(line);
  findings_->setPlan(plan);
  if (timeline_ && !f.ranks.empty()) {
    timeline_->set_ranks(f.ranks, straggler_rank(f));
    view_->timelineChanged();
  }
  // The viewer opens on the steps the report is about; 0 shows the whole recording.
  if (timeline_ && f.analysed_start_ns < f.analysed_end_ns) {
    const auto shift = static_cast<double>(view_->shiftOfPid(f.pid));
    view_->setHomeRange(static_cast<double>(f.analysed_start_ns) + shift,
                        static_cast<double>(f.analysed_end_ns) + shift);
  }
}

void MainWindow::failed(const QString& reason) {
  progress_->hide();
  view_->setMessage(QString());
  status_->setText(QStringLiteral("Could not open: %1").arg(reason));
  // Window-modal but not blocking: the viewer keeps running (and tests can find it).
  auto* box = new QMessageBox(QMessageBox::Critical, QStringLiteral("Cannot open recording"), reason,
                              QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("openErrorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  emit loadFailed(reason);
}

void MainWindow::setHighlight(HighlightSource source) {
  highlight_source_ = highlight_.empty() ? HighlightSource::kNone : source;
  view_->setHighlight(highlight_.empty() ? nullptr : &highlight_);
}

void MainWindow::onSelection() {
  const EventRef& ref = view_->selected();
  if (!timeline_) return;
  if (!ref.valid()) {
    if (view_->hasRangeSelection())
      showRangeDetails(view_->rangeStart(), view_->rangeEnd());
    else
      details_->clear();
    if (highlight_source_ == HighlightSource::kOp) {
      highlight_.clear();
      setHighlight(HighlightSource::kNone);
    }
    return;
  }
  details_->showEventDetails(*timeline_, details_source_.get(), ref, view_->shiftOf(ref.track));
  // Walking search matches, or a table's instances, keeps them lit, ops
  // included (a CPU-only job is all ops).
  if (keep_highlight_) return;
  if (ref.event().kind == EventKind::kOp) {
    // An op's kernels light up across the GPU rows.
    highlight_.select_refs(timeline_->gpu_work_of_op(ref));
    setHighlight(HighlightSource::kOp);
  } else if (highlight_source_ == HighlightSource::kOp) {
    highlight_.clear();
    setHighlight(HighlightSource::kNone);
  }
}

void MainWindow::onRange(qint64 a, qint64 b) {
  if (!timeline_) return;
  if (b > a)
    showRangeDetails(a, b);
  else if (!view_->selected().valid())
    details_->clear();
}

void MainWindow::showRangeDetails(qint64 a, qint64 b) {
  details_->showRange(*timeline_, a, b, [this](const Track* t) { return view_->shiftOf(t); });
}

void MainWindow::onSearch(const QString& pattern, bool regex) {
  if (!timeline_ || !timeline_->strings()) return;
  if (pattern.isEmpty()) {
    if (highlight_source_ == HighlightSource::kSearch) {
      highlight_.clear();
      setHighlight(HighlightSource::kNone);
    }
    search_->setResult(QString());
    return;
  }
  QString error;
  const std::vector<bool> mask = match_names(*timeline_->strings(), pattern, regex, &error);
  if (!error.isEmpty()) {
    if (highlight_source_ == HighlightSource::kSearch || highlight_source_ == HighlightSource::kNone) {
      highlight_.clear();
      setHighlight(HighlightSource::kNone);
    }
    search_->setResult(QStringLiteral("bad regex: ") + error);
    return;
  }
  highlight_.select(*timeline_, [&mask](const Event& e) { return e.name < mask.size() && mask[e.name]; });
  setHighlight(HighlightSource::kSearch);
  search_->setResult(highlight_.empty() ? QStringLiteral("no match")
                                        : QStringLiteral("%1 matches").arg(q(format_count(static_cast<int64_t>(highlight_.count())))));
}

void MainWindow::stepMatch(bool forward) {
  if (highlight_.empty()) return;
  const EventRef& cur = view_->selected();
  const int64_t t = static_cast<int64_t>(forward ? view_->viewStart() : view_->viewEnd());
  EventRef next = forward ? highlight_.next(cur, t) : highlight_.prev(cur, t);
  if (!next.valid()) next = forward ? highlight_.next({}, INT64_MIN) : highlight_.prev({}, INT64_MAX);  // wrap
  if (!next.valid()) return;
  keep_highlight_ = true;
  view_->select(next, true);
  keep_highlight_ = false;
  search_->setResult(QStringLiteral("%1 / %2").arg(highlight_.rank(next)).arg(highlight_.count()));
}

void MainWindow::activateSummary(EventKind kind, uint32_t name, int aux, const EventRef& longest) {
  if (!timeline_) return;
  highlight_.select(*timeline_, [&](const Event& e) {
    return e.kind == kind && (aux >= 0 ? e.aux == aux : e.name == name);
  });
  setHighlight(HighlightSource::kTable);
  keep_highlight_ = true;
  if (longest.valid()) view_->select(longest, true);
  keep_highlight_ = false;
}

void MainWindow::onFinding(int row) {
  const FindingItem& f = findings_->model()->row(row);
  if (!timeline_) return;
  // In a distributed job each range is drawn on its own rank's rows, and the
  // view goes to the first one's rank.
  std::vector<TimelineView::EvidenceBand> bands;
  if (timeline_->multi_rank())
    for (const auto& e : f.evidence)
      if (e.pid >= 0) bands.push_back({e.pid, e.start, e.end, q(e.label)});
  view_->setEvidence(bands);
  if (f.evidence.empty()) return;
  const EvidenceRange& first = f.evidence.front();
  const int64_t shift = bands.empty() ? 0 : view_->shiftOfPid(first.pid);
  const int64_t a = saturating_add(first.start, shift), b = saturating_add(first.end, shift);
  const double pad = std::max(static_cast<double>(b - a) * 0.15, 1000.0);
  view_->setRange(static_cast<double>(a) - pad, static_cast<double>(b) + pad);
  view_->setRangeSelection(a, b);
  if (!bands.empty())
    for (size_t g = 0; g < timeline_->groups().size(); ++g)
      if (timeline_->groups()[g].pid == first.pid) view_->revealGroup(static_cast<int>(g));
}

}  // namespace gpuscope::gui
