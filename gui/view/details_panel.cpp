#include "gui/view/details_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "gui/model/format.h"

namespace gpuscope::gui {
namespace {

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

}  // namespace

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  title_ = new QLabel(this);
  title_->setWordWrap(true);
  title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  tree_ = new QTreeWidget(this);
  tree_->setColumnCount(2);
  tree_->setHeaderLabels({QStringLiteral("Field"), QStringLiteral("Value")});
  tree_->setRootIsDecorated(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  tree_->setWordWrap(false);
  go_ = new QPushButton(this);
  go_->hide();
  connect(go_, &QPushButton::clicked, this, &DetailsPanel::followRequested);
  layout->addWidget(title_);
  layout->addWidget(tree_, 1);
  layout->addWidget(go_);
  clear();
}

void DetailsPanel::clear() {
  title_->setText(QStringLiteral("Click an event for its details; drag on the ruler (or Shift+drag) to measure a range."));
  tree_->clear();
  go_->hide();
  link_ = {};
}

void DetailsPanel::showEventDetails(const Timeline& tl, DetailsSource* source, const EventRef& ref, int64_t shift) {
  clear();
  if (!ref.valid()) return;
  const Event& e = ref.event();
  title_->setText(q(tl.name(e.name)));
  std::vector<DetailField> fields;
  if (source) {
    try {
      fields = source->fields(e);
    } catch (const std::exception& ex) {
      fields.push_back({"error", ex.what()});
    }
  }
  for (const auto& f : fields)
    new QTreeWidgetItem(tree_, {q(f.name), q(f.value)});
  new QTreeWidgetItem(tree_, {QStringLiteral("row"), q(ref.track->title)});
  if (shift != 0) {
    const auto& ref_rank = tl.alignment();
    new QTreeWidgetItem(tree_, {QStringLiteral("drawn shifted"),
                                QStringLiteral("%1%2 to align steps with rank %3 (the times above are true)")
                                    .arg(shift > 0 ? QStringLiteral("+") : QString())
                                    .arg(q(format_duration(static_cast<double>(shift))))
                                    .arg(ref_rank.reference_rank)});
  }
  // Links between a launch and its GPU work.
  if (e.kind == EventKind::kApiCall) {
    auto work = tl.gpu_work(ref);
    if (!work.empty()) {
      auto* item = new QTreeWidgetItem(tree_, {QStringLiteral("launches"), QStringLiteral("%1 GPU op(s)").arg(work.size())});
      for (size_t i = 0; i < work.size() && i < 50; ++i)
        new QTreeWidgetItem(item, {q(kind_name(work[i].event().kind)), q(tl.name(work[i].event().name))});
      item->setExpanded(true);
      link_ = work.front();
      go_->setText(QStringLiteral("Go to the GPU work →"));
      go_->show();
    }
  } else if (is_gpu_kind(e.kind)) {
    EventRef launch = tl.launch_of(ref);
    if (launch.valid()) {
      new QTreeWidgetItem(tree_, {QStringLiteral("launched by"), q(tl.name(launch.event().name)) + QStringLiteral(" on ") + q(launch.track->title)});
      link_ = launch;
      go_->setText(QStringLiteral("← Go to the launch"));
      go_->show();
    }
  } else if (e.kind == EventKind::kOp) {
    auto work = tl.gpu_work_of_op(ref);
    int64_t gpu = 0;
    for (const auto& w : work) gpu += w.event().duration();
    new QTreeWidgetItem(tree_, {QStringLiteral("GPU work"),
                                QStringLiteral("%1 op(s), %2").arg(work.size()).arg(q(format_duration(static_cast<double>(gpu))))});
    if (!work.empty()) {
      link_ = work.front();
      go_->setText(QStringLiteral("Go to its first kernel →"));
      go_->show();
    }
  }
}

void DetailsPanel::showRange(const Timeline& tl, int64_t a, int64_t b,
                             const std::function<int64_t(const Track*)>& shift) {
  clear();
  if (b <= a) return;
  const double span = static_cast<double>(b - a);
  title_->setText(QStringLiteral("Range %1 — %2: %3")
                      .arg(QString::number(static_cast<double>(a) / 1e9, 'f', 6) + " s")
                      .arg(QString::number(static_cast<double>(b) / 1e9, 'f', 6) + " s")
                      .arg(q(format_duration(span))));
  new QTreeWidgetItem(tree_, {QStringLiteral("duration"), q(format_duration(span))});
  bool shifted = false;
  for (const auto& g : tl.groups())
    for (const Track* t : g.tracks) shifted = shifted || (shift && shift(t) != 0);
  if (shifted)
    new QTreeWidgetItem(tree_, {QStringLiteral("times"), QStringLiteral("rank %1's; the other ranks' rows are shifted to align steps")
                                                           .arg(tl.alignment().reference_rank)});
  for (const auto& g : tl.groups()) {
    QTreeWidgetItem* group = nullptr;
    for (const Track* t : g.tracks) {
      if (t->type != TrackType::kEvents || t->lanes.empty()) continue;
      const Lane& lane = t->lanes[0];
      const int64_t s = shift ? shift(t) : 0;
      const int64_t busy = lane.lod.busy_in(lane.events, saturating_sub(a, s), saturating_sub(b, s));
      if (!group) group = new QTreeWidgetItem(tree_, {q(g.group.title), QString()});
      new QTreeWidgetItem(group, {q(t->title), QStringLiteral("busy %1 (%2 %)")
                                                   .arg(q(format_duration(static_cast<double>(busy))))
                                                   .arg(100.0 * static_cast<double>(busy) / span, 0, 'f', 1)});
    }
    if (group) group->setExpanded(true);
  }
}

QString DetailsPanel::text() const {
  QStringList lines{title_->text()};
  std::function<void(QTreeWidgetItem*, int)> walk = [&](QTreeWidgetItem* it, int depth) {
    lines << QString(depth * 2, ' ') + it->text(0) + ": " + it->text(1);
    for (int i = 0; i < it->childCount(); ++i) walk(it->child(i), depth + 1);
  };
  for (int i = 0; i < tree_->topLevelItemCount(); ++i) walk(tree_->topLevelItem(i), 0);
  return lines.join('\n');
}

}  // namespace gpuscope::gui
