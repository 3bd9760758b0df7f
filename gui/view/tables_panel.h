// Summary tables (kernels, ops, memcpys) and the findings list: sortable,
// filterable; activating a row asks the window to highlight and jump.
#pragma once

#include <QWidget>

#include "gui/model/summary_models.h"

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTextBrowser;

namespace gpuscope::gui {

// One table with a filter box over a model with a kSortRole.
class SummaryTable : public QWidget {
  Q_OBJECT
 public:
  // Sorted by `sort_column` (largest first) until the user picks another.
  SummaryTable(QAbstractItemModel* model, int stretch_column, int sort_column, QWidget* parent = nullptr);
  QTableView* view() const { return view_; }
  QLineEdit* filter() const { return filter_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }

 signals:
  void rowActivated(int source_row);

 private:
  QLineEdit* filter_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
};

class FindingsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit FindingsPanel(QWidget* parent = nullptr);
  FindingsModel* model() const { return model_; }
  SummaryTable* table() const { return table_; }
  void setStatus(const QString& status);  // "analyzer not built", "analyzing…", ""
  QString status() const;
  // The report's plan (the what-if replay's check, then one line per fix), as
  // `analyze` prints it; an empty list hides it.
  void setPlan(const QStringList& lines);
  QString plan() const;

 signals:
  void findingActivated(int row);

 private:
  FindingsModel* model_;
  SummaryTable* table_;
  QLabel* status_;
  QLabel* plan_;
  QTextBrowser* fix_;
};

}  // namespace gpuscope::gui
