#include "gui/view/tables_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace gpuscope::gui {

SummaryTable::SummaryTable(QAbstractItemModel* model, int stretch_column, int sort_column, QWidget* parent)
    : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(QStringLiteral("Filter by name (regular expression)"));
  filter_->setClearButtonEnabled(true);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model);
  proxy_->setSortRole(kSortRole);
  proxy_->setFilterKeyColumn(stretch_column);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  view_ = new QTableView(this);
  view_->setModel(proxy_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(sort_column, Qt::DescendingOrder);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(20);
  view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setSectionResizeMode(stretch_column, QHeaderView::Stretch);
  view_->setWordWrap(false);
  layout->addWidget(filter_);
  layout->addWidget(view_, 1);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    proxy_->setFilterRegularExpression(
        QRegularExpression(text, QRegularExpression::CaseInsensitiveOption));
  });
  auto activate = [this](const QModelIndex& index) {
    if (index.isValid()) emit rowActivated(proxy_->mapToSource(index).row());
  };
  connect(view_, &QTableView::clicked, this, activate);
  connect(view_, &QTableView::activated, this, activate);
}

FindingsPanel::FindingsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  model_ = new FindingsModel(this);
  table_ = new SummaryTable(model_, FindingsModel::kTitle, FindingsModel::kSaving, this);
  table_->filter()->setPlaceholderText(QStringLiteral("Filter findings"));
  fix_ = new QTextBrowser(this);
  fix_->setMaximumHeight(110);
  fix_->setPlaceholderText(QStringLiteral("Click a finding: the timeline zooms to its evidence."));
  plan_ = new QLabel(this);
  plan_->setObjectName(QStringLiteral("plan"));
  plan_->setWordWrap(true);
  plan_->setTextFormat(Qt::PlainText);
  plan_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plan_->hide();
  layout->addWidget(status_);
  layout->addWidget(plan_);
  layout->addWidget(table_, 1);
  layout->addWidget(fix_);
  connect(table_, &SummaryTable::rowActivated, this, [this](int row) {
    const FindingItem& f = model_->row(row);
    fix_->setPlainText(QString::fromStdString(f.summary + (f.fix.empty() ? "" : "\n\nFix: " + f.fix)));
    emit findingActivated(row);
  });
}

void FindingsPanel::setStatus(const QString& status) {
  status_->setText(status);
  status_->setVisible(!status.isEmpty());
}

QString FindingsPanel::status() const { return status_->text(); }

void FindingsPanel::setPlan(const QStringList& lines) {
  plan_->setText(lines.isEmpty() ? QString() : QStringLiteral("Plan: ") + lines.join(QLatin1Char('\n')));
  plan_->setVisible(!lines.isEmpty());
}

QString FindingsPanel::plan() const { return plan_->text(); }

}  // namespace gpuscope::gui
