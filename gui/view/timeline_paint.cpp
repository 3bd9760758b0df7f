// Painting of the timeline. Two passes: first the lanes and counters are
// written as pixel rows straight into the image (one level-of-detail walk per
// lane, no QPainter calls per event), then QPainter draws what needs it: events
// wide enough for a box and a label, headers, the ruler and the overlays.
#include <QElapsedTimer>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "trace_formats/common/text.h"
#include "gui/model/format.h"
#include "gui/view/colors.h"
#include "gui/view/timeline_view.h"

namespace gpuscope::gui {
namespace {

constexpr int kLabelMinPx = 28;  // boxes this wide get a label
constexpr size_t kMaxArrows = 64;

QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

QRgb counter_color(const std::string& unit) {
  if (unit == "B") return qRgb(70, 120, 200);
  if (unit == "%") return qRgb(60, 150, 90);
  if (unit == "W") return qRgb(205, 85, 60);
  return qRgb(110, 110, 150);
}

QString counter_value(double v, const std::string& unit) {
  if (unit == "B") return q(format_bytes(v));
  return QString::number(v, 'g', 4) + (unit.empty() ? QString() : " " + q(unit));
}

}  // namespace

const QString& TimelineView::elided(uint32_t name, int width, const QFontMetrics& fm) {
  if (elide_cache_.size() > 50'000) elide_cache_.clear();
  const uint64_t key = (static_cast<uint64_t>(name) << 20) | static_cast<uint64_t>(width / 6);
  auto it = elide_cache_.find(key);
  if (it != elide_cache_.end()) return it->second;
  QString text = fm.elidedText(q(timeline_->name(name)), Qt::ElideRight, (width / 6) * 6);
  return elide_cache_.emplace(key, std::move(text)).first->second;
}

void TimelineView::writeLine(QImage& img, int y0, int rows, const std::vector<QRgb>& line) {
  const int x0 = kHeaderWidth;
  const int n = std::min<int>(static_cast<int>(line.size()), img.width() - x0);
  if (n <= 0) return;
  for (int y = std::max(y0, kRulerHeight); y < std::min(y0 + rows, img.height()); ++y)
    std::memcpy(reinterpret_cast<QRgb*>(img.scanLine(y)) + x0, line.data(), sizeof(QRgb) * static_cast<size_t>(n));
}

void TimelineView::paintCounter(QImage& img, const Track* track, int y, int h) {
  const int tw = timelineWidth();
  const Window w{t0_ - static_cast<double>(shiftOf(track)), ns_per_px_, tw};
  track->counter_lod.columns(track->samples, w, lo_, hi_);
  const double vmin = std::min(0.0, track->counter_lod.min_value());
  const double vmax = std::max(track->counter_lod.max_value(), vmin + 1e-9);
  const QRgb line = counter_color(track->unit);
  const QRgb fill = blend(line, kBackground, 0.35);
  const int bottom = y + h - 1;
  auto ypos = [&](double v) {
    return bottom - static_cast<int>(std::lround((v - vmin) / (vmax - vmin) * (h - 2)));
  };
  const int stride = static_cast<int>(img.bytesPerLine() / sizeof(QRgb));
  auto* bits = reinterpret_cast<QRgb*>(img.bits());
  const int x_end = std::min(tw, img.width() - kHeaderWidth);
  for (int c = 0; c < x_end; ++c) {
    if (std::isnan(lo_[static_cast<size_t>(c)])) continue;
    const int yhi = ypos(hi_[static_cast<size_t>(c)]), ylo = ypos(lo_[static_cast<size_t>(c)]);
    for (int yy = std::max(yhi, kRulerHeight); yy <= std::min(bottom, img.height() - 1); ++yy)
      bits[yy * stride + kHeaderWidth + c] = yy <= ylo ? line : fill;
  }
}

void TimelineView::paintLanes(QImage& img) {
  boxes_.clear();
  const int H = img.height();
  std::vector<LaneJob> jobs;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& row = rows_[i];
    const int y = kRulerHeight + row.y - scroll_y_;
    if (y >= H || y + row.height <= kRulerHeight || !row.track) continue;
    const QRgb bg = (i % 2) ? kBackground : kBackgroundAlt;
    line_.assign(static_cast<size_t>(timelineWidth()), bg);
    writeLine(img, y, row.height, line_);
    if (row.track->type == TrackType::kCounter) {
      paintCounter(img, row.track, y + kTrackPad, row.height - 2 * kTrackPad);
      continue;
    }
    const int64_t shift = shiftOf(row.track);
    for (uint32_t l = 0; l < row.track->lanes.size(); ++l) {
      const int ly = y + kTrackPad + static_cast<int>(l) * kLaneHeight;
      if (ly >= H || ly + kLaneHeight <= kRulerHeight) continue;
      jobs.push_back({row.track, l, ly, bg, shift});
    }
  }
  LaneFrame f;
  f.t0 = t0_;
  f.ns_per_px = ns_per_px_;
  f.x0 = kHeaderWidth;
  f.width = timelineWidth();
  f.clip_top = kRulerHeight;
  f.lane_height = kLaneHeight;
  f.highlight = highlight_;
  lanes_.paint(img, f, jobs, boxes_);
}

void TimelineView::paintBoxes(QPainter& p) {
  const QFontMetrics fm(p.font());
  const double x_min = kHeaderWidth, x_max = kHeaderWidth + timelineWidth();
  for (const LaneBox& b : boxes_) {
    const double x0 = std::max(b.x0, x_min - 2), x1 = std::min(b.x1, x_max + 2);
    if (x1 <= x0) continue;
    const QRectF r(x0, b.y, x1 - x0, b.h);
    p.fillRect(r, QColor::fromRgb(b.color));
    if (b.outline) {
      p.setPen(QPen(QColor(20, 20, 20), 1));
      p.drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    }
    const int w = static_cast<int>(x1 - x0) - 6;
    if (w >= kLabelMinPx) {
      p.setPen(is_dark(b.color) ? Qt::white : QColor(20, 20, 20));
      const QString& text = elided(b.name, w, fm);
      p.drawText(QPointF(x0 + 3, b.y + (b.h + fm.ascent() - fm.descent()) / 2.0), text);
    }
  }
}

void TimelineView::paintStepLanes(QPainter& p, int height) {
  const QFontMetrics fm(p.font());
  const double x_min = kHeaderWidth, x_max = kHeaderWidth + timelineWidth();
  p.save();
  p.setClipRect(QRectF(x_min, kRulerHeight, x_max - x_min, height - kRulerHeight));
  for (const Row& row : rows_) {
    if (!row.track || row.track->type != TrackType::kSteps) continue;
    const int y = kRulerHeight + row.y - scroll_y_ + kTrackPad;
    if (y >= height || y + kLaneHeight <= kRulerHeight) continue;
    const auto& steps = row.track->steps;
    const double shift = static_cast<double>(shiftOf(row.track));
    // Sorted by start: from the last step that starts before the view.
    auto it = std::upper_bound(steps.begin(), steps.end(), viewStart() - shift,
                               [](double t, const StepMarker& s) { return t < static_cast<double>(s.start); });
    if (it != steps.begin()) --it;
    double last_x1 = -1e9;
    for (; it != steps.end() && static_cast<double>(it->start) + shift <= viewEnd(); ++it) {
      const double x0 = std::max(xOf(static_cast<double>(it->start) + shift), x_min - 2);
      const double x1 = std::min(xOf(static_cast<double>(it->end) + shift), x_max + 2);
      if (x1 - last_x1 < 1 && x1 - x0 < 1) continue;  // packed tighter than pixels: one box per pixel
      last_x1 = x1;
      const QRectF r(x0, y + 1, std::max(1.0, x1 - x0 - 1), kLaneHeight - 2);
      p.fillRect(r, (it->number & 1) ? QColor(150, 110, 190) : QColor(120, 70, 165));
      const QString label = QStringLiteral("step %1 · %2").arg(it->number).arg(q(format_duration(static_cast<double>(saturating_sub(it->end, it->start)))));
      if (r.width() >= fm.horizontalAdvance(label) + 6) {
        p.setPen(Qt::white);
        p.drawText(r.adjusted(3, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
      } else if (r.width() >= kLabelMinPx) {
        p.setPen(Qt::white);
        p.drawText(r.adjusted(3, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, QString::number(it->number));
      }
    }
  }
  p.restore();
}

void TimelineView::paintHeaders(QPainter& p, int width, int height) {
  const QFontMetrics fm(p.font());
  p.fillRect(QRect(0, kRulerHeight, kHeaderWidth, height - kRulerHeight), QColor::fromRgb(kHeaderBackground));
  p.setPen(QColor(200, 204, 210));
  p.drawLine(kHeaderWidth - 1, kRulerHeight, kHeaderWidth - 1, height);
  for (const Row& row : rows_) {
    const int y = kRulerHeight + row.y - scroll_y_;
    if (y >= height || y + row.height <= kRulerHeight) continue;
    if (!row.track) {
      const auto& g = timeline_->groups()[static_cast<size_t>(row.group)];
      // The straggler's group stands out before anyone clicks.
      p.fillRect(QRect(0, y, width, row.height), g.flagged ? QColor(250, 214, 190) : QColor::fromRgb(kGroupBackground));
      p.setPen(g.flagged ? QColor(150, 40, 0) : QColor(30, 30, 30));
      const QString arrow = groupCollapsed(row.group) ? QStringLiteral("▸ ") : QStringLiteral("▾ ");
      QString title = arrow + q(g.title());
      if (groupCollapsed(row.group)) title += QStringLiteral("  (%1 rows)").arg(g.tracks.size());
      p.drawText(QRect(6, y, width - 12, row.height), Qt::AlignVCenter | Qt::AlignLeft, title);
      continue;
    }
    p.setPen(QColor(40, 40, 40));
    QString title = fm.elidedText(q(row.track->title), Qt::ElideRight, kHeaderWidth - 22);
    p.drawText(QRect(14, y + kTrackPad, kHeaderWidth - 20, kLaneHeight), Qt::AlignVCenter | Qt::AlignLeft, title);
    if (row.track->type == TrackType::kCounter) {
      p.setPen(QColor(100, 100, 100));
      QString max = QStringLiteral("max ") + counter_value(row.track->counter_lod.max_value(), row.track->unit);
      p.drawText(QRect(14, y + kTrackPad + kLaneHeight, kHeaderWidth - 20, kLaneHeight),
                 Qt::AlignVCenter | Qt::AlignLeft, max);
    }
    p.setPen(QColor(215, 218, 222));
    p.drawLine(0, y + row.height - 1, width, y + row.height - 1);
  }
}

void TimelineView::paintRuler(QPainter& p, int width) {
  const QFontMetrics fm(p.font());
  p.fillRect(QRect(0, 0, width, kRulerHeight), QColor::fromRgb(kHeaderBackground));
  p.setPen(QColor(160, 165, 172));
  p.drawLine(0, kRulerHeight - 1, width, kRulerHeight - 1);
  const double span = viewEnd() - viewStart();
  p.setPen(QColor(50, 50, 50));
  p.drawText(QRect(6, 0, kHeaderWidth - 12, kRulerHeight), Qt::AlignVCenter | Qt::AlignLeft,
             QStringLiteral("view %1").arg(q(format_duration(span))));
  // Ticks at 1, 2 or 5 x 10^k ns, about 110 px apart.
  const double raw = 110 * ns_per_px_;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (mag * m >= raw) {
      step = mag * m;
      break;
    }
  // Labels in the unit of the step; when absolute values would need too many
  // digits, the first label is absolute (seconds) and the others an offset.
  double scale = 1;
  const char* unit = "ns";
  if (step >= 1e8) scale = 1e9, unit = "s";
  else if (step >= 1e5) scale = 1e6, unit = "ms";
  else if (step >= 1e2) scale = 1e3, unit = "µs";
  const int digits = std::max(0, static_cast<int>(std::ceil(-std::log10(step / scale) - 1e-9)));
  const bool relative = std::fabs(viewEnd() / scale) * std::pow(10.0, digits) > 1e6;
  const int digits_s = std::max(0, static_cast<int>(std::ceil(-std::log10(step / 1e9) - 1e-9)));
  const double first = std::ceil(viewStart() / step) * step;
  const int x_end = kHeaderWidth + timelineWidth();
  double base = NAN;
  for (int i = -1; i * step / 5 + first <= viewEnd(); ++i) {
    const double t = first + i * step / 5;
    const double x = xOf(t);
    if (x < kHeaderWidth || x >= x_end) continue;
    const bool major = i % 5 == 0;
    p.setPen(QColor(90, 90, 90));
    p.drawLine(QPointF(x, kRulerHeight - (major ? 9 : 4)), QPointF(x, kRulerHeight - 1));
    if (!major) continue;
    QString label;
    if (!relative) {
      label = QString::number(t / scale, 'f', digits) + QLatin1Char(' ') + QString::fromUtf8(unit);
    } else if (std::isnan(base)) {
      base = t;
      label = QString::number(t / 1e9, 'f', digits_s) + QStringLiteral(" s");
    } else {
      label = QStringLiteral("+") + QString::number((t - base) / scale, 'f', digits) + QLatin1Char(' ') +
              QString::fromUtf8(unit);
    }
    p.drawText(QPointF(x + 3, kRulerHeight - 11), label);
  }
  // A measured range: its span on the ruler, with its duration.
  if (hasRangeSelection()) {
    const double xa = std::max<double>(xOf(static_cast<double>(range_a_)), kHeaderWidth);
    const double xb = std::min<double>(xOf(static_cast<double>(range_b_)), x_end);
    if (xb > xa) {
      p.fillRect(QRectF(xa, 0, xb - xa, kRulerHeight - 1), QColor(60, 120, 220, 60));
      const QString text = q(format_duration(static_cast<double>(range_b_ - range_a_)));
      const double tw = fm.horizontalAdvance(text) + 10;
      const QRectF box(std::clamp((xa + xb - tw) / 2, static_cast<double>(kHeaderWidth), x_end - tw), 2, tw, fm.height() + 2);
      p.fillRect(box, QColor(40, 90, 200));
      p.setPen(Qt::white);
      p.drawText(box, Qt::AlignCenter, text);
    }
  }
  // Steps: number labels along the ruler's top; of several ranks the
  // reference rank's, on whose clock aligned rows are drawn.
  if (timeline_) {
    p.setPen(QColor(120, 60, 160));
    double last_x = -1e9;
    const int64_t ref = timeline_->alignment().reference_pid;
    for (const StepMarker& s : timeline_->steps()) {
      if (ref >= 0 && s.pid != ref) continue;
      const double x = xOf(static_cast<double>(s.start));
      if (x < kHeaderWidth || x >= x_end || x - last_x < 40) continue;
      p.drawText(QPointF(x + 2, fm.ascent()), QStringLiteral("step %1").arg(s.number));
      last_x = x;
    }
  }
}

void TimelineView::paintOverlays(QPainter& p, int width, int height) {
  const int x_end = kHeaderWidth + timelineWidth();
  p.save();
  p.setClipRect(QRect(kHeaderWidth, kRulerHeight, x_end - kHeaderWidth, height - kRulerHeight));
  paintStepLines(p, height);
  paintEvidence(p);
  if (hasRangeSelection()) {
    const double xa = xOf(static_cast<double>(range_a_)), xb = xOf(static_cast<double>(range_b_));
    p.fillRect(QRectF(xa, kRulerHeight, xb - xa, height - kRulerHeight), QColor(60, 120, 220, 40));
    p.setPen(QPen(QColor(40, 90, 200), 1));
    p.drawLine(QPointF(xa, kRulerHeight), QPointF(xa, height));
    p.drawLine(QPointF(xb, kRulerHeight), QPointF(xb, height));
    // Per-row busy time of the top-level events inside the range.
    const QFontMetrics fm(p.font());
    for (const Row& row : rows_) {
      const int y = kRulerHeight + row.y - scroll_y_;
      if (!row.track || row.track->lanes.empty() || y >= height || y + row.height <= kRulerHeight) continue;
      const Lane& lane = row.track->lanes[0];
      const int64_t shift = shiftOf(row.track);
      const int64_t busy = lane.lod.busy_in(lane.events, saturating_sub(range_a_, shift), saturating_sub(range_b_, shift));
      if (busy <= 0) continue;
      QString text = QStringLiteral("%1 · %2 %").arg(q(format_duration(static_cast<double>(busy))))
                         .arg(100.0 * static_cast<double>(busy) / static_cast<double>(range_b_ - range_a_), 0, 'f', 1);
      const int tw = fm.horizontalAdvance(text) + 8;
      const QRectF box(std::max<double>(xb - tw, kHeaderWidth), y + 1, tw, fm.height() + 2);
      p.fillRect(box, QColor(255, 255, 255, 215));
      p.setPen(QColor(30, 60, 140));
      p.drawText(box, Qt::AlignCenter, text);
    }
  }
  if (selected_.valid()) {
    const QPoint c = eventPosition(selected_);
    int row = rowOf(selected_.track);
    if (row >= 0) {
      const Event& e = selected_.event();
      const double shift = static_cast<double>(shiftOf(selected_.track));
      const int y = kRulerHeight + rows_[static_cast<size_t>(row)].y - scroll_y_ + kTrackPad +
                    static_cast<int>(selected_.lane) * kLaneHeight;
      const double x0 = std::max(xOf(static_cast<double>(e.start) + shift), kHeaderWidth - 3.0);
      const double x1 = std::min(std::max(xOf(static_cast<double>(e.end) + shift), x0 + 2), x_end + 3.0);
      p.setPen(QPen(QColor(255, 170, 0), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(x0 - 1, y, x1 - x0 + 2, kLaneHeight));
    }
    (void)c;
    p.setRenderHint(QPainter::Antialiasing, true);
    if (selected_.event().kind == EventKind::kApiCall) {
      auto work = timeline_->gpu_work(selected_);
      for (size_t i = 0; i < work.size() && i < kMaxArrows; ++i) paintArrow(p, selected_, work[i]);
    } else if (is_gpu_kind(selected_.event().kind)) {
      EventRef launch = timeline_->launch_of(selected_);
      if (launch.valid()) paintArrow(p, launch, selected_);
    }
    p.setRenderHint(QPainter::Antialiasing, false);
  }
  p.restore();
  (void)width;
}

void TimelineView::paintStepLines(QPainter& p, int height) {
  // Step markers across the rows, unless they are packed so tight that they
  // would hide the rows (the ruler still numbers them). Of several ranks,
  // each row shows its own rank's steps, where its shift puts them.
  const auto& steps = timeline_->steps();
  const bool per_rank = timeline_->multi_rank();
  const double w = timelineWidth();
  p.setPen(QPen(QColor(120, 60, 160, 140), 1));
  auto visible = [&](double shift) {
    auto first = std::lower_bound(steps.begin(), steps.end(), viewStart() - shift,
                                  [](const StepMarker& s, double t) { return static_cast<double>(s.start) < t; });
    auto last = std::lower_bound(first, steps.end(), viewEnd() - shift,
                                 [](const StepMarker& s, double t) { return static_cast<double>(s.start) < t; });
    return std::pair(first, last);
  };
  if (!per_rank) {
    auto [first, last] = visible(0);
    if ((last - first) * 8 >= w) return;
    for (auto it = first; it != last; ++it) {
      const double x = std::round(xOf(static_cast<double>(it->start))) + 0.5;
      p.drawLine(QPointF(x, kRulerHeight), QPointF(x, height));
    }
    return;
  }
  for (const Row& row : rows_) {
    if (!row.track || row.track->pid < 0) continue;
    const int y = kRulerHeight + row.y - scroll_y_;
    if (y >= height || y + row.height <= kRulerHeight) continue;
    const double shift = static_cast<double>(shiftOf(row.track));
    auto [first, last] = visible(shift);
    // All processes' steps are in view; this row draws its own.
    const double ranks = static_cast<double>(std::max<size_t>(1, timeline_->alignment().shifts.size()));
    if (static_cast<double>(last - first) * 8 >= w * ranks) continue;
    for (auto it = first; it != last; ++it) {
      if (it->pid != row.track->pid) continue;
      const double x = std::round(xOf(static_cast<double>(it->start) + shift)) + 0.5;
      p.drawLine(QPointF(x, y), QPointF(x, y + row.height));
    }
  }
}

void TimelineView::paintEvidence(QPainter& p) {
  const QFontMetrics fm(p.font());
  for (const EvidenceRect& r : evidenceRects()) {
    p.fillRect(r.rect, QColor(255, 150, 0, 70));
    p.setPen(QPen(QColor(220, 110, 0), 1));
    p.drawLine(r.rect.topLeft(), r.rect.bottomLeft());
    p.drawLine(r.rect.topRight(), r.rect.bottomRight());
    if (r.track) continue;
    // The band's label on its group's header.
    const QRectF box = r.rect.adjusted(2, 1, 0, -1);
    const QString label = fm.elidedText(evidence_[static_cast<size_t>(r.band)].label, Qt::ElideRight, static_cast<int>(box.width()) - 6);
    if (label.isEmpty()) continue;
    p.fillRect(QRectF(box.left(), box.top(), fm.horizontalAdvance(label) + 6, box.height()), QColor(255, 236, 205));
    p.setPen(QColor(150, 60, 0));
    p.drawText(box.adjusted(3, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, label);
  }
}

void TimelineView::paintArrow(QPainter& p, const EventRef& from, const EventRef& to) {
  auto anchor = [&](const EventRef& r) -> QPointF {
    int row = rowOf(r.track);
    if (row < 0) return {-1, -1};
    const double y = kRulerHeight + rows_[static_cast<size_t>(row)].y - scroll_y_ + kTrackPad +
                     static_cast<double>(r.lane) * kLaneHeight + kLaneHeight / 2.0;
    return {xOf(static_cast<double>(r.event().start) + static_cast<double>(shiftOf(r.track))), y};
  };
  const QPointF a = anchor(from), b = anchor(to);
  if (a.y() < 0 || b.y() < 0) return;
  QPainterPath path(a);
  const double dx = std::max(30.0, std::abs(b.x() - a.x()) / 2);
  path.cubicTo(a + QPointF(dx / 2, 0), b - QPointF(dx / 2, 0), b);
  p.setPen(QPen(QColor(220, 60, 30), 1.6));
  p.setBrush(Qt::NoBrush);
  p.drawPath(path);
  const double angle = std::atan2(b.y() - path.pointAtPercent(0.95).y(), b.x() - path.pointAtPercent(0.95).x());
  QPolygonF head;
  head << b << b - QPointF(8 * std::cos(angle - 0.4), 8 * std::sin(angle - 0.4))
       << b - QPointF(8 * std::cos(angle + 0.4), 8 * std::sin(angle + 0.4));
  p.setBrush(QColor(220, 60, 30));
  p.drawPolygon(head);
  p.setBrush(Qt::NoBrush);
}

void TimelineView::render(QImage& img) {
  QElapsedTimer clock;
  clock.start();
  const int W = img.width(), H = img.height();
  const LaneCacheKey key{t0_, ns_per_px_, W, H, scroll_y_, content_generation_};
  if (timeline_ && key == lane_cache_key_ && lane_cache_.size() == img.size() && lane_cache_.format() == img.format()) {
    std::memcpy(img.bits(), lane_cache_.constBits(), static_cast<size_t>(img.sizeInBytes()));
    boxes_ = lane_cache_boxes_;
  } else {
    img.fill(kBackground);
    if (timeline_) {
      paintLanes(img);
      lane_cache_ = img.copy();
      lane_cache_boxes_ = boxes_;
      lane_cache_key_ = key;
    }
  }
  timing_.lanes_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  QPainter p(&img);
  QFont f = font();
  f.setPointSizeF(std::max(7.0, f.pointSizeF() * 0.85));
  p.setFont(f);
  if (!timeline_) {
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRect(0, 0, W, H), Qt::AlignCenter,
               QStringLiteral("Open a recording (Ctrl+O), or drop a .db or torch.profiler trace here"));
    return;
  }
  paintBoxes(p);
  paintStepLanes(p, H);
  paintHeaders(p, W, H);
  paintOverlays(p, W, H);
  paintRuler(p, W);
  if (rows_.empty() && !message_.isEmpty()) {
    p.setPen(QColor(90, 90, 90));
    p.drawText(QRect(kHeaderWidth, kRulerHeight, W - kHeaderWidth, H - kRulerHeight), Qt::AlignCenter, message_);
  }
  timing_.painter_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6 - timing_.lanes_ms;
}

}  // namespace gpuscope::gui
