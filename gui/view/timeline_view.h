// The timeline: a ruler, then per group (GPU, process) its tracks, each with
// lanes of events or a counter plot. Paints only the visible rows, and for
// lanes with more than about one event per pixel paints the level-of-detail
// columns instead of events. Navigation as in Perfetto: wheel zooms at the
// cursor, drag pans, W/S zoom, A/D pan; Shift+drag or a drag on the ruler
// selects a time range.
//
// In a distributed job the ranks' steps are aligned by default (model/ranks.h):
// each row is drawn shifted by its rank's constant, so the x axis is the
// reference rank's clock. Times in the view's API (viewStart, xOf, the range
// selection, evidence bands' x) are such display times; events keep their
// true times, and shiftOf(track) converts.
#pragma once

#include <QImage>
#include <QWidget>

#include <unordered_map>
#include <vector>

#include "gui/model/highlight.h"
#include "gui/model/timeline.h"
#include "gui/view/lane_painter.h"

class QFontMetrics;
class QPainter;
class QScrollBar;

namespace gpuscope::gui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kHeaderWidth = 210;
  static constexpr int kRulerHeight = 28;
  static constexpr int kGroupHeight = 22;
  static constexpr int kLaneHeight = 17;
  static constexpr int kCounterHeight = 32;
  static constexpr int kTrackPad = 3;

  explicit TimelineView(QWidget* parent = nullptr);
  ~TimelineView() override;

  // The view keeps a pointer; call timelineChanged() after the timeline grows.
  void setTimeline(const Timeline* timeline);
  void timelineChanged();

  // Visible time window, ns since origin.
  double viewStart() const { return t0_; }
  double viewEnd() const { return t0_ + ns_per_px_ * timelineWidth(); }
  double nsPerPixel() const { return ns_per_px_; }
  void setRange(double t0, double t1);
  // The whole recording (key 0).
  void fitAll();
  // Where the view opens and Home returns: the analysed steps (display times,
  // a < b), once the analysis has run; until the user moves the view, it shows
  // them. Without one, Home fits all.
  void setHomeRange(double a, double b);
  bool hasHomeRange() const { return home_a_ < home_b_; }
  double homeStart() const { return home_a_; }
  double homeEnd() const { return home_b_; }
  void showHome();
  void zoomBy(double factor, double anchor_x);  // factor < 1 zooms in
  void panByPixels(double dx);
  void zoomToSelection();
  bool userNavigated() const { return user_navigated_; }

  void select(const EventRef& ref, bool reveal = false);
  const EventRef& selected() const { return selected_; }
  void setRangeSelection(int64_t a, int64_t b);
  void clearRangeSelection();
  bool hasRangeSelection() const { return range_a_ < range_b_; }
  int64_t rangeStart() const { return range_a_; }
  int64_t rangeEnd() const { return range_b_; }

  // Shown in the middle while there are no rows ("Loading…").
  void setMessage(const QString& message);

  // Events drawn bright over a dimmed timeline; nullptr clears. Not owned.
  void setHighlight(const Highlight* h);

  // Align steps (on by default; only a recording with several ranks has shifts).
  void setAlignSteps(bool on);
  bool alignSteps() const { return align_steps_; }
  // Whether rows are drawn shifted now.
  bool stepsAligned() const { return align_steps_ && timeline_ && !timeline_->alignment().shifts.empty(); }
  // ns added to the track's (or the process's) true times on screen.
  int64_t shiftOf(const Track* track) const {
    return align_steps_ && timeline_ && track ? timeline_->step_shift(track) : 0;
  }
  int64_t shiftOfPid(int64_t pid) const {
    return align_steps_ && timeline_ ? timeline_->alignment().offset(pid) : 0;
  }

  // A finding's evidence: a band over the rows of one process (true times).
  struct EvidenceBand {
    int64_t pid = -1;
    int64_t start = 0, end = 0;
    QString label;
  };
  void setEvidence(std::vector<EvidenceBand> bands);
  const std::vector<EvidenceBand>& evidence() const { return evidence_; }
  // Where the bands are drawn: one rectangle per band and row of its process
  // (widget coordinates, rows on screen only); painting uses the same.
  struct EvidenceRect {
    const Track* track = nullptr;  // null: the group's header
    int group = -1;
    int band = -1;  // index into evidence()
    QRectF rect;
  };
  std::vector<EvidenceRect> evidenceRects() const;
  // Expands the group and scrolls its header into view.
  void revealGroup(int group);

  void setGroupCollapsed(int group, bool collapsed);
  bool groupCollapsed(int group) const;

  // Where a track's row is (widget coordinates, the header column included);
  // empty when its group is collapsed.
  QRect trackRect(const Track* track) const;
  // The step of a step lane (TrackType::kSteps) under a widget position.
  const StepMarker* stepAt(const QPoint& pos) const;
  // Widget position of the middle of an event, or (-1, -1) when not on screen.
  QPoint eventPosition(const EventRef& ref) const;
  EventRef eventAt(const QPoint& pos) const;
  int timelineWidth() const;
  double xOf(double t) const { return kHeaderWidth + (t - t0_) / ns_per_px_; }
  double timeAt(double x) const { return t0_ + (x - kHeaderWidth) * ns_per_px_; }

  // Renders the whole widget as it would paint into `image` (sized like the
  // widget); used by paintEvent, --screenshot and the benchmark.
  void render(QImage& image);
  // Where the last render's time went (the benchmark reports it).
  struct FrameTiming {
    double lanes_ms = 0;    // level-of-detail walks and pixel rows
    double painter_ms = 0;  // boxes, labels, headers, ruler, overlays
  };
  const FrameTiming& lastFrameTiming() const { return timing_; }
  // Frames that only change overlays (selection, range) reuse the last lanes;
  // this forces a full redraw (the benchmark measures those).
  void invalidateLaneCache() { ++content_generation_; }

 signals:
  void selectionChanged();
  void rangeChanged(qint64 start, qint64 end);
  void viewChanged();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

 private:
  struct Row {
    int group = -1;
    const Track* track = nullptr;  // null: the group's header
    int y = 0, height = 0;         // in content coordinates (before scrolling)
  };
  void relayout();
  void clampView();
  double displayMin() const;  // the loaded extent on screen (shifted rows included)
  double displayMax() const;
  void updateScrollBar();
  int rowAt(int y) const;  // index into rows_, -1 if none
  int rowOf(const Track* t) const;
  int viewportHeight() const;
  void changed();  // repaint + viewChanged

  // Painting (timeline_paint.cpp).
  void paintLanes(QImage& img);
  void paintCounter(QImage& img, const Track* track, int y, int h);
  void writeLine(QImage& img, int y, int rows, const std::vector<QRgb>& line);
  void paintBoxes(QPainter& p);
  void paintStepLanes(QPainter& p, int height);
  void paintStepLines(QPainter& p, int height);
  void paintEvidence(QPainter& p);
  void paintHeaders(QPainter& p, int width, int height);
  void paintRuler(QPainter& p, int width);
  void paintOverlays(QPainter& p, int width, int height);
  void paintArrow(QPainter& p, const EventRef& from, const EventRef& to);
  const QString& elided(uint32_t name, int width, const QFontMetrics& fm);

  const Timeline* timeline_ = nullptr;
  const Highlight* highlight_ = nullptr;
  bool align_steps_ = true;
  std::vector<EvidenceBand> evidence_;
  std::vector<Row> rows_;
  std::vector<bool> collapsed_;
  int content_height_ = 0;
  int scroll_y_ = 0;
  QScrollBar* vbar_ = nullptr;

  double t0_ = 0, ns_per_px_ = 1e6;
  bool user_navigated_ = false;
  double home_a_ = 0, home_b_ = 0;
  EventRef selected_;
  int64_t range_a_ = 0, range_b_ = 0;

  enum class Drag { kNone, kPan, kRange };
  Drag drag_ = Drag::kNone;
  QPoint press_pos_, last_pos_;
  double press_t_ = 0;
  bool moved_ = false;

  QString message_;
  FrameTiming timing_;
  // What the cached lane pixels were drawn for.
  struct LaneCacheKey {
    double t0 = 0, ns_per_px = 0;
    int width = 0, height = 0, scroll = 0;
    uint64_t generation = 0;
    bool operator==(const LaneCacheKey&) const = default;
  };
  uint64_t content_generation_ = 1;  // bumped by layout, data and highlight changes
  LaneCacheKey lane_cache_key_;
  QImage lane_cache_;
  std::vector<LaneBox> lane_cache_boxes_;
  QImage canvas_;
  std::unordered_map<uint64_t, QString> elide_cache_;
  // Scratch reused across frames.
  LanePainter lanes_;
  std::vector<QRgb> line_;
  std::vector<double> lo_, hi_;
  std::vector<LaneBox> boxes_;
};

}  // namespace gpuscope::gui
