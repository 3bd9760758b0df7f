// Every field of the selected event, its launch/GPU-work links, or for a
// dragged range its duration and per-row busy time.
#pragma once

#include <QWidget>

#include <functional>

#include "gui/model/details.h"
#include "gui/model/timeline.h"

class QLabel;
class QPushButton;
class QTreeWidget;

namespace gpuscope::gui {

class DetailsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit DetailsPanel(QWidget* parent = nullptr);
  void clear();
  // Times shown are the event's true ones; `shift` (aligned steps) says where it is drawn.
  void showEventDetails(const Timeline& tl, DetailsSource* source, const EventRef& ref, int64_t shift = 0);
  // [a, b) in display times; `shift` gives each row's (aligned steps), none when empty.
  void showRange(const Timeline& tl, int64_t a, int64_t b,
                 const std::function<int64_t(const Track*)>& shift = {});
  // The linked event the "Go to" button selects.
  const EventRef& linkTarget() const { return link_; }
  // All shown rows as "name: value" lines (tests, copy).
  QString text() const;

 signals:
  void followRequested();

 private:
  QLabel* title_;
  QTreeWidget* tree_;
  QPushButton* go_;
  EventRef link_;
};

}  // namespace gpuscope::gui
