#include "gui/view/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace gpuscope::gui {
namespace {

constexpr double kMinSpanNs = 20;       // deepest zoom: 20 ns across the view
constexpr double kWheelStep = 0.85;     // zoom per wheel notch
constexpr double kKeyZoomStep = 0.80;   // W / S
constexpr double kKeyPanFraction = 0.15;  // A / D, of the view width
constexpr int kClickSlop = 4;           // px a press may move and still be a click

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(false);
  setMinimumSize(400, 200);
  setAttribute(Qt::WA_OpaquePaintEvent);
  vbar_ = new QScrollBar(Qt::Vertical, this);
  vbar_->setCursor(Qt::ArrowCursor);
  connect(vbar_, &QScrollBar::valueChanged, this, [this](int v) {
    scroll_y_ = v;
    update();
  });
}

TimelineView::~TimelineView() = default;

void TimelineView::setTimeline(const Timeline* timeline) {
  timeline_ = timeline;
  highlight_ = nullptr;
  evidence_.clear();
  selected_ = {};
  range_a_ = range_b_ = 0;
  user_navigated_ = false;
  home_a_ = home_b_ = 0;
  collapsed_.clear();
  scroll_y_ = 0;
  elide_cache_.clear();
  relayout();
  fitAll();
  user_navigated_ = false;
}

void TimelineView::timelineChanged() {
  elide_cache_.clear();
  relayout();
  // Until the user moves, follow the data as it arrives.
  if (!user_navigated_) {
    showHome();
    user_navigated_ = false;
  }
  changed();
}

void TimelineView::relayout() {
  ++content_generation_;
  rows_.clear();
  int y = 0;
  if (timeline_) {
    const auto& groups = timeline_->groups();
    collapsed_.resize(groups.size(), false);
    for (size_t g = 0; g < groups.size(); ++g) {
      if (groups[g].tracks.empty()) continue;
      rows_.push_back({static_cast<int>(g), nullptr, y, kGroupHeight});
      y += kGroupHeight;
      if (collapsed_[g]) continue;
      for (const Track* t : groups[g].tracks) {
        int h = t->type == TrackType::kCounter
                    ? kCounterHeight
                    : std::max<int>(1, static_cast<int>(t->lanes.size())) * kLaneHeight;
        h += 2 * kTrackPad;
        rows_.push_back({static_cast<int>(g), t, y, h});
        y += h;
      }
    }
  }
  content_height_ = y;
  updateScrollBar();
}

int TimelineView::viewportHeight() const { return std::max(0, height() - kRulerHeight); }

int TimelineView::timelineWidth() const {
  return std::max(1, width() - kHeaderWidth - vbar_->sizeHint().width());
}

void TimelineView::updateScrollBar() {
  int max = std::max(0, content_height_ - viewportHeight());
  vbar_->setRange(0, max);
  vbar_->setPageStep(std::max(1, viewportHeight()));
  vbar_->setSingleStep(kLaneHeight);
  scroll_y_ = std::clamp(scroll_y_, 0, max);
  vbar_->setValue(scroll_y_);
  const int w = vbar_->sizeHint().width();
  vbar_->setGeometry(width() - w, kRulerHeight, w, viewportHeight());
}

void TimelineView::resizeEvent(QResizeEvent*) {
  updateScrollBar();
  clampView();
}

void TimelineView::changed() {
  update();
  emit viewChanged();
}

void TimelineView::clampView() {
  if (!timeline_) return;
  const double t_min = displayMin(), t_max = displayMax();
  const double span_all = std::max(t_max - t_min, kMinSpanNs);
  const double w = timelineWidth();
  ns_per_px_ = std::clamp(ns_per_px_, kMinSpanNs / w, 4 * span_all / w);
  const double span = ns_per_px_ * w;
  // Keep some of the recording on screen.
  const double lo = t_min - span * 0.9;
  const double hi = t_max - span * 0.1;
  t0_ = std::clamp(t0_, lo, std::max(lo, hi));
}

double TimelineView::displayMin() const {
  return static_cast<double>(timeline_->t_min()) + (stepsAligned() ? static_cast<double>(timeline_->min_shift()) : 0.0);
}

double TimelineView::displayMax() const {
  return static_cast<double>(timeline_->t_max()) + (stepsAligned() ? static_cast<double>(timeline_->max_shift()) : 0.0);
}

void TimelineView::setRange(double t0, double t1) {
  if (t1 <= t0) t1 = t0 + kMinSpanNs;
  t0_ = t0;
  ns_per_px_ = (t1 - t0) / timelineWidth();
  clampView();
  user_navigated_ = true;
  changed();
}

void TimelineView::fitAll() {
  if (!timeline_) return;
  const double lo = displayMin(), hi = displayMax();
  const double pad = std::max(1.0, (hi - lo) * 0.01);
  setRange(lo - pad, hi + pad);
}

void TimelineView::setHomeRange(double a, double b) {
  home_a_ = a;
  home_b_ = b;
  if (!user_navigated_) {
    showHome();
    user_navigated_ = false;
  }
}

void TimelineView::showHome() {
  if (!hasHomeRange()) return fitAll();
  const double pad = std::max(1.0, (home_b_ - home_a_) * 0.01);
  setRange(home_a_ - pad, home_b_ + pad);
}

void TimelineView::zoomBy(double factor, double anchor_x) {
  const double t_anchor = timeAt(anchor_x);
  ns_per_px_ *= factor;
  clampView();
  t0_ = t_anchor - (anchor_x - kHeaderWidth) * ns_per_px_;
  clampView();
  user_navigated_ = true;
  changed();
}

void TimelineView::panByPixels(double dx) {
  t0_ += dx * ns_per_px_;
  clampView();
  user_navigated_ = true;
  changed();
}

void TimelineView::zoomToSelection() {
  double a, b;
  if (hasRangeSelection()) {
    a = static_cast<double>(range_a_);
    b = static_cast<double>(range_b_);
  } else if (selected_.valid()) {
    const double shift = static_cast<double>(shiftOf(selected_.track));
    a = static_cast<double>(selected_.event().start) + shift;
    b = static_cast<double>(selected_.event().end) + shift;
  } else {
    return;
  }
  const double pad = std::max((b - a) * 0.1, kMinSpanNs);
  setRange(a - pad, b + pad);
}

void TimelineView::select(const EventRef& ref, bool reveal) {
  selected_ = ref;
  if (ref.valid() && reveal) {
    int row = rowOf(ref.track);
    if (row < 0) {  // its group is collapsed
      for (size_t g = 0; g < timeline_->groups().size(); ++g)
        for (const Track* t : timeline_->groups()[g].tracks)
          if (t == ref.track) collapsed_[g] = false;
      relayout();
      row = rowOf(ref.track);
    }
    if (row >= 0) {
      const int lane_y = rows_[static_cast<size_t>(row)].y + kTrackPad + static_cast<int>(ref.lane) * kLaneHeight;
      if (lane_y < scroll_y_ || lane_y + kLaneHeight > scroll_y_ + viewportHeight()) {
        scroll_y_ = std::max(0, lane_y - viewportHeight() / 3);
        updateScrollBar();
      }
    }
    const Event& e = ref.event();
    const double shift = static_cast<double>(shiftOf(ref.track));
    const double a = static_cast<double>(e.start) + shift, b = static_cast<double>(e.end) + shift;
    // Show the event at about 60 % of the width, or centred if it is tiny.
    const double span = std::max((b - a) / 0.6, std::min(viewEnd() - viewStart(), 1e6));
    if (b - a > 0.8 * (viewEnd() - viewStart()) || a < viewStart() || b > viewEnd() ||
        (b - a) / ns_per_px_ < 2)
      setRange((a + b) / 2 - span / 2, (a + b) / 2 + span / 2);
  }
  update();
  emit selectionChanged();
}

void TimelineView::setRangeSelection(int64_t a, int64_t b) {
  range_a_ = std::min(a, b);
  range_b_ = std::max(a, b);
  update();
  emit rangeChanged(range_a_, range_b_);
}

void TimelineView::clearRangeSelection() {
  range_a_ = range_b_ = 0;
  update();
  emit rangeChanged(0, 0);
}

void TimelineView::setMessage(const QString& message) {
  message_ = message;
  update();
}

void TimelineView::setHighlight(const Highlight* h) {
  highlight_ = h;
  ++content_generation_;  // the same highlight object may hold new matches
  update();
}

void TimelineView::setAlignSteps(bool on) {
  if (on == align_steps_) return;
  // The reference rank does not move, so the window stays where it is.
  align_steps_ = on;
  ++content_generation_;
  clampView();
  changed();
}

void TimelineView::setEvidence(std::vector<EvidenceBand> bands) {
  evidence_ = std::move(bands);
  update();
}

std::vector<TimelineView::EvidenceRect> TimelineView::evidenceRects() const {
  std::vector<EvidenceRect> out;
  if (!timeline_) return out;
  const double x_min = kHeaderWidth, x_max = kHeaderWidth + timelineWidth();
  for (size_t bi = 0; bi < evidence_.size(); ++bi) {
    const EvidenceBand& b = evidence_[bi];
    for (const Row& row : rows_) {
      const auto& g = timeline_->groups()[static_cast<size_t>(row.group)];
      const int64_t pid = row.track && row.track->pid >= 0 ? row.track->pid : g.pid;
      if (pid != b.pid) continue;
      const int y = kRulerHeight + row.y - scroll_y_;
      if (y >= height() || y + row.height <= kRulerHeight) continue;
      // A header row takes its process's shift; a row its track's.
      const double shift = static_cast<double>(row.track ? shiftOf(row.track) : shiftOfPid(b.pid));
      const double xa = std::max(xOf(static_cast<double>(b.start) + shift), x_min);
      const double xb = std::min(xOf(static_cast<double>(b.end) + shift), x_max);
      if (xb <= xa) continue;
      out.push_back({row.track, row.group, static_cast<int>(bi), QRectF(xa, y, std::max(1.0, xb - xa), row.height)});
    }
  }
  return out;
}

void TimelineView::revealGroup(int group) {
  if (!timeline_ || group < 0 || static_cast<size_t>(group) >= timeline_->groups().size()) return;
  if (groupCollapsed(group)) setGroupCollapsed(group, false);
  for (const Row& row : rows_) {
    if (row.group != group || row.track) continue;
    if (row.y < scroll_y_ || row.y + kGroupHeight > scroll_y_ + viewportHeight()) {
      scroll_y_ = row.y;
      updateScrollBar();
    }
    break;
  }
  update();
}

void TimelineView::setGroupCollapsed(int group, bool collapsed) {
  if (group < 0 || static_cast<size_t>(group) >= collapsed_.size()) return;
  collapsed_[static_cast<size_t>(group)] = collapsed;
  relayout();
  update();
}

bool TimelineView::groupCollapsed(int group) const {
  return group >= 0 && static_cast<size_t>(group) < collapsed_.size() &&
         collapsed_[static_cast<size_t>(group)];
}

int TimelineView::rowAt(int y) const {
  const int cy = y - kRulerHeight + scroll_y_;
  if (y < kRulerHeight) return -1;
  auto it = std::upper_bound(rows_.begin(), rows_.end(), cy, [](int v, const Row& r) { return v < r.y; });
  if (it == rows_.begin()) return -1;
  --it;
  return cy < it->y + it->height ? static_cast<int>(it - rows_.begin()) : -1;
}

int TimelineView::rowOf(const Track* t) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].track == t) return static_cast<int>(i);
  return -1;
}

QPoint TimelineView::eventPosition(const EventRef& ref) const {
  if (!ref.valid()) return {-1, -1};
  int row = rowOf(ref.track);
  if (row < 0) return {-1, -1};
  const Event& e = ref.event();
  const double mid = (static_cast<double>(e.start) + static_cast<double>(e.end)) / 2 + static_cast<double>(shiftOf(ref.track));
  const int x = static_cast<int>(std::lround(std::clamp(xOf(mid), -1e6, 1e6)));
  const int y = rows_[static_cast<size_t>(row)].y + kTrackPad + static_cast<int>(ref.lane) * kLaneHeight +
                kLaneHeight / 2 - scroll_y_ + kRulerHeight;
  if (x < kHeaderWidth || x >= kHeaderWidth + timelineWidth() || y < kRulerHeight || y >= height())
    return {-1, -1};
  return {x, y};
}

EventRef TimelineView::eventAt(const QPoint& pos) const {
  if (pos.x() < kHeaderWidth) return {};
  int r = rowAt(pos.y());
  if (r < 0 || !rows_[static_cast<size_t>(r)].track) return {};
  const Row& row = rows_[static_cast<size_t>(r)];
  if (row.track->type != TrackType::kEvents) return {};
  const int ly = pos.y() - kRulerHeight + scroll_y_ - row.y - kTrackPad;
  if (ly < 0) return {};
  const uint32_t lane = static_cast<uint32_t>(ly / kLaneHeight);
  const int64_t t = static_cast<int64_t>(timeAt(pos.x())) - shiftOf(row.track);
  const int64_t slop = static_cast<int64_t>(3 * ns_per_px_);
  return Timeline::hit(row.track, lane, t, slop);
}

QRect TimelineView::trackRect(const Track* track) const {
  const int row = rowOf(track);
  if (row < 0) return {};
  const Row& r = rows_[static_cast<size_t>(row)];
  return QRect(0, kRulerHeight + r.y - scroll_y_, kHeaderWidth + timelineWidth(), r.height);
}

const StepMarker* TimelineView::stepAt(const QPoint& pos) const {
  if (pos.x() < kHeaderWidth) return nullptr;
  const int r = rowAt(pos.y());
  if (r < 0 || !rows_[static_cast<size_t>(r)].track) return nullptr;
  const Track* t = rows_[static_cast<size_t>(r)].track;
  if (t->type != TrackType::kSteps) return nullptr;
  const double at = timeAt(pos.x()) - static_cast<double>(shiftOf(t));
  auto it = std::upper_bound(t->steps.begin(), t->steps.end(), at,
                             [](double v, const StepMarker& s) { return v < static_cast<double>(s.start); });
  if (it == t->steps.begin()) return nullptr;
  --it;
  return at < static_cast<double>(it->end) ? &*it : nullptr;
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const QPoint d = e->angleDelta();
  if (e->modifiers() & Qt::ShiftModifier) {
    vbar_->setValue(vbar_->value() - d.y());
  } else if (d.y() != 0) {
    zoomBy(std::pow(kWheelStep, d.y() / 120.0), e->position().x());
  }
  if (d.x() != 0) panByPixels(-d.x() / 2.0);
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  setFocus(Qt::MouseFocusReason);
  press_pos_ = last_pos_ = e->position().toPoint();
  moved_ = false;
  // Group headers toggle on click.
  int r = rowAt(press_pos_.y());
  if (r >= 0 && !rows_[static_cast<size_t>(r)].track && press_pos_.x() < kHeaderWidth) {
    int g = rows_[static_cast<size_t>(r)].group;
    setGroupCollapsed(g, !groupCollapsed(g));
    drag_ = Drag::kNone;
    return;
  }
  const bool range = press_pos_.y() < kRulerHeight || (e->modifiers() & Qt::ShiftModifier);
  drag_ = range ? Drag::kRange : Drag::kPan;
  press_t_ = timeAt(press_pos_.x());
  if (range) setCursor(Qt::IBeamCursor);
  else setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  if ((pos - press_pos_).manhattanLength() > kClickSlop) moved_ = true;
  if (drag_ == Drag::kPan) {
    const QPoint d = pos - last_pos_;
    t0_ -= d.x() * ns_per_px_;
    clampView();
    if (d.y() != 0) vbar_->setValue(vbar_->value() - d.y());
    user_navigated_ = true;
    changed();
  } else if (drag_ == Drag::kRange && moved_) {
    setRangeSelection(static_cast<int64_t>(press_t_), static_cast<int64_t>(timeAt(pos.x())));
  }
  last_pos_ = pos;
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  unsetCursor();
  const Drag was = drag_;
  drag_ = Drag::kNone;
  if (was == Drag::kNone || moved_) return;
  // A click: select what is under the cursor (or nothing). A click on a step
  // lane measures that step, on every rank at once when steps are aligned.
  if (was == Drag::kRange) clearRangeSelection();
  const QPoint pos = e->position().toPoint();
  if (const StepMarker* step = stepAt(pos)) {
    const int64_t shift = shiftOfPid(step->pid);
    setRangeSelection(saturating_add(step->start, shift), saturating_add(step->end, shift));
    select({});
    return;
  }
  select(eventAt(pos));
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  const QPoint cursor = mapFromGlobal(QCursor::pos());
  const double anchor = rect().contains(cursor) && cursor.x() >= kHeaderWidth
                            ? cursor.x()
                            : kHeaderWidth + timelineWidth() / 2.0;
  switch (e->key()) {
    case Qt::Key_W: zoomBy(kKeyZoomStep, anchor); break;
    case Qt::Key_S: zoomBy(1 / kKeyZoomStep, anchor); break;
    case Qt::Key_A: panByPixels(-kKeyPanFraction * timelineWidth()); break;
    case Qt::Key_D: panByPixels(kKeyPanFraction * timelineWidth()); break;
    case Qt::Key_F: zoomToSelection(); break;
    case Qt::Key_0: fitAll(); break;
    case Qt::Key_Home: showHome(); break;
    case Qt::Key_Escape:
      clearRangeSelection();
      setEvidence({});
      select({});
      break;
    default: QWidget::keyPressEvent(e); return;
  }
  e->accept();
}

void TimelineView::paintEvent(QPaintEvent*) {
  if (canvas_.size() != size()) canvas_ = QImage(size(), QImage::Format_ARGB32_Premultiplied);
  render(canvas_);
  QPainter p(this);
  p.drawImage(0, 0, canvas_);
}

}  // namespace gpuscope::gui
