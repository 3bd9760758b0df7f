// The viewer's window: timeline in the middle, details on the right, findings
// and summary tables below, search on top. Opens recordings from the open
// dialog, the recent-files menu or drag and drop; a file that cannot be read
// gives a dialog with the reason and the current recording stays.
#pragma once

#include <QMainWindow>

#include <memory>

#include "gui/model/details.h"
#include "gui/model/highlight.h"
#include "gui/model/loader.h"
#include "gui/model/summary_models.h"
#include "gui/model/timeline.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;

namespace gpuscope::gui {

class DetailsPanel;
class FindingsPanel;
class SearchBar;
class SummaryTable;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads on a worker thread; the window stays responsive and fills in.
  void openFile(const QString& path);
  // Loads on this thread (screenshots, tests). Returns false and sets `error`
  // when the file cannot be read; no dialog.
  bool openBlocking(const QString& path, QString* error, bool findings = true);
  bool loading() const { return loader_ && loader_->running(); }

  const Timeline* timeline() const { return timeline_.get(); }
  TimelineView* timelineView() const { return view_; }
  DetailsPanel* detailsPanel() const { return details_; }
  SearchBar* searchBar() const { return search_; }
  FindingsPanel* findingsPanel() const { return findings_; }
  SummaryTable* kernelTable() const { return kernel_table_; }
  SummaryTable* opTable() const { return op_table_; }
  SummaryTable* memcpyTable() const { return memcpy_table_; }
  QTabWidget* bottomTabs() const { return tabs_; }
  const Highlight& highlight() const { return highlight_; }
  // View > Align steps across ranks: checked by default, enabled for recordings with several ranks.
  QAction* alignStepsAction() const { return align_action_; }
  QStringList recentFiles() const;

 signals:
  void recordingOpened();  // the file is readable; the timeline starts to fill in
  void batchAdded();       // a part of the recording (GPU, CPU, counters) is on screen
  void loadFinished();
  void loadFailed(const QString& reason);

 protected:
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  enum class HighlightSource { kNone, kSearch, kTable, kOp };
  void buildMenus();
  void showOpenDialog();
  void addRecent(const QString& path);
  void refreshRecentMenu();
  void install(std::shared_ptr<const RecordingInfo> info);
  void addBatch(std::shared_ptr<const LoadBatch> batch);
  void setFindings(const FindingsResult& f);
  void failed(const QString& reason);
  void onSelection();
  void onRange(qint64 a, qint64 b);
  void showRangeDetails(qint64 a, qint64 b);
  void onSearch(const QString& pattern, bool regex);
  void stepMatch(bool forward);
  void setHighlight(HighlightSource source);
  void activateSummary(EventKind kind, uint32_t name, int aux, const EventRef& longest);
  void onFinding(int row);

  TimelineView* view_;
  DetailsPanel* details_;
  SearchBar* search_;
  FindingsPanel* findings_;
  NameSummaryModel* kernel_model_;
  NameSummaryModel* op_model_;
  MemcpySummaryModel* memcpy_model_;
  SummaryTable* kernel_table_;
  SummaryTable* op_table_;
  SummaryTable* memcpy_table_;
  QTabWidget* tabs_;
  QMenu* recent_menu_ = nullptr;
  QAction* align_action_ = nullptr;
  QProgressBar* progress_;
  QLabel* status_;

  std::unique_ptr<Loader> loader_;
  int generation_ = 0;
  qint64 load_started_ms_ = 0;
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<DetailsSource> details_source_;
  Highlight highlight_;
  HighlightSource highlight_source_ = HighlightSource::kNone;
  bool keep_highlight_ = false;  // selecting a search match or a table row's longest
  QString path_;
};

}  // namespace gpuscope::gui
