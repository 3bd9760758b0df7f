// Table models for the kernels, ops and memcpys summaries and the findings.
// Display text in Qt::DisplayRole, the raw number in Qt::UserRole (sort by it).
#pragma once

#include <QAbstractTableModel>

#include <memory>
#include <vector>

#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

inline constexpr int kSortRole = Qt::UserRole;

// Kernels or ops: one row per name.
class NameSummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kName, kCount, kTotal, kAverage, kMin, kMax, kShare, kColumns };
  explicit NameSummaryModel(QObject* parent = nullptr);
  void set(std::vector<NameSummary> rows, std::shared_ptr<const StringTable> strings);
  const NameSummary& row(int r) const { return rows_[static_cast<size_t>(r)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<NameSummary> rows_;
  std::shared_ptr<const StringTable> strings_;
  int64_t grand_total_ = 0;
};

class MemcpySummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kDirection, kCount, kBytes, kTotal, kAverage, kBandwidth, kColumns };
  explicit MemcpySummaryModel(QObject* parent = nullptr);
  void set(std::vector<MemcpySummary> rows);
  const MemcpySummary& row(int r) const { return rows_[static_cast<size_t>(r)]; }
  static QString direction_name(uint8_t copy_kind);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<MemcpySummary> rows_;
};

class FindingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kSeverity, kTitle, kSaving, kRule, kColumns };
  explicit FindingsModel(QObject* parent = nullptr);
  void set(std::vector<FindingItem> rows);
  const FindingItem& row(int r) const { return rows_[static_cast<size_t>(r)]; }
  // The Finding column: the title, and the rank a cross-rank finding names.
  static QString title(const FindingItem& f);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<FindingItem> rows_;
};

}  // namespace gpuscope::gui
