#include "gui/model/summary_models.h"

#include "trace_formats/common/text.h"
#include "gui/model/format.h"

namespace gpuscope::gui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString dur(double ns) { return q(format_duration(ns)); }

}  // namespace

NameSummaryModel::NameSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void NameSummaryModel::set(std::vector<NameSummary> rows, std::shared_ptr<const StringTable> strings) {
  beginResetModel();
  rows_ = std::move(rows);
  strings_ = std::move(strings);
  grand_total_ = 0;
  for (const auto& r : rows_) grand_total_ += r.total;
  endResetModel();
}

int NameSummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int NameSummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant NameSummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const NameSummary& r = rows_[static_cast<size_t>(index.row())];
  const double avg = r.count ? static_cast<double>(r.total) / static_cast<double>(r.count) : 0.0;
  const double share = grand_total_ ? 100.0 * static_cast<double>(r.total) / static_cast<double>(grand_total_) : 0.0;
  QString name;
  if (index.column() == kName && strings_ && r.name < strings_->size()) name = q((*strings_)[r.name]);
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kName: return name;
      case kCount: return q(format_count(r.count));
      case kTotal: return dur(static_cast<double>(r.total));
      case kAverage: return dur(avg);
      case kMin: return dur(static_cast<double>(r.min));
      case kMax: return dur(static_cast<double>(r.max));
      case kShare: return QString::number(share, 'f', 1) + " %";
    }
  } else if (role == kSortRole) {
    switch (index.column()) {
      case kName: return name;
      case kCount: return static_cast<qlonglong>(r.count);
      case kTotal: return static_cast<qlonglong>(r.total);
      case kAverage: return avg;
      case kMin: return static_cast<qlonglong>(r.min);
      case kMax: return static_cast<qlonglong>(r.max);
      case kShare: return share;
    }
  } else if (role == Qt::TextAlignmentRole && index.column() != kName) {
    return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant NameSummaryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= kColumns) return {};
  static const char* const names[] = {"Name", "Count", "Total", "Avg", "Min", "Max", "% of total"};
  return QString::fromUtf8(names[section]);
}

// ---------------------------------------------------------------------------

MemcpySummaryModel::MemcpySummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemcpySummaryModel::set(std::vector<MemcpySummary> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

QString MemcpySummaryModel::direction_name(uint8_t k) {
  static const char* const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return k < 11 ? QString::fromLatin1(names[k]) : QStringLiteral("kind %1").arg(k);
}

int MemcpySummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int MemcpySummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant MemcpySummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const MemcpySummary& r = rows_[static_cast<size_t>(index.row())];
  const double avg = r.count ? static_cast<double>(r.total) / static_cast<double>(r.count) : 0.0;
  // bytes per ns = GB/s
  const double gbps = r.total ? static_cast<double>(r.bytes) / static_cast<double>(r.total) : 0.0;
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
    switch (index.column()) {
      case kDirection: return direction_name(r.copy_kind);
      case kCount: return q(format_count(r.count));
      case kBytes: return q(format_bytes(static_cast<double>(r.bytes)));
      case kTotal: return dur(static_cast<double>(r.total));
      case kAverage: return dur(avg);
      case kBandwidth: return QString::number(gbps, 'f', 2) + " GB/s";
    }
  } else if (role == kSortRole) {
    switch (index.column()) {
      case kDirection: return direction_name(r.copy_kind);
      case kCount: return static_cast<qlonglong>(r.count);
      case kBytes: return static_cast<qlonglong>(r.bytes);
      case kTotal: return static_cast<qlonglong>(r.total);
      case kAverage: return avg;
      case kBandwidth: return gbps;
    }
  } else if (role == Qt::TextAlignmentRole && index.column() != kDirection) {
    return static_cast<int>(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant MemcpySummaryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= kColumns) return {};
  static const char* const names[] = {"Direction", "Count", "Bytes", "Total", "Avg", "Bandwidth"};
  return QString::fromUtf8(names[section]);
}

// ---------------------------------------------------------------------------

FindingsModel::FindingsModel(QObject* parent) : QAbstractTableModel(parent) {}

QString FindingsModel::title(const FindingItem& f) {
  return f.rank >= 0 ? q(f.title) + QStringLiteral(" — rank %1").arg(f.rank) : q(f.title);
}

void FindingsModel::set(std::vector<FindingItem> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  endResetModel();
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kColumns) return {};
  const FindingItem& f = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kSeverity: return q(f.severity);
      case kTitle: return title(f);
      case kSaving:
        // As the report prints it: "2.200 ms (22.7 %)", per step.
        return f.saving_ns > 0 ? q(format_fixed(f.saving_ns / 1e6, 3)) + QStringLiteral(" ms (") +
                                     q(format_fixed(100 * f.saving_fraction, 1)) + QStringLiteral(" %)")
                               : QStringLiteral("—");
      case kRule: return q(f.id);
    }
  } else if (role == Qt::ToolTipRole) {
    QString tip = q(f.summary);
    if (!f.fix.empty()) tip += QStringLiteral("\n\nFix: ") + q(f.fix);
    return tip;
  } else if (role == kSortRole) {
    switch (index.column()) {
      case kSeverity: return q(f.severity);
      case kTitle: return title(f);
      case kSaving: return f.saving_ns;
      case kRule: return q(f.id);
    }
  }
  return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= kColumns) return {};
  static const char* const names[] = {"Severity", "Finding", "Saving / step", "Rule"};
  return QString::fromUtf8(names[section]);
}

}  // namespace gpuscope::gui
