// Paints event lanes as rows of pixels: one level-of-detail walk per lane,
// lanes spread over threads (each writes its own image rows). Events wide
// enough for a box and a label come back as boxes for QPainter.
#pragma once

#include <QImage>

#include <vector>

#include "gui/model/highlight.h"
#include "gui/model/lod.h"
#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

struct LaneJob {
  const Track* track;
  uint32_t lane;
  int y;    // top of the lane in the image
  QRgb bg;  // the row's background
  int64_t shift = 0;  // ns added to the track's times on screen (aligned steps)
};

struct LaneBox {
  double x0, x1;
  int y, h;
  QRgb color;
  uint32_t name;
  bool outline;  // highlighted
};

struct LaneFrame {
  double t0 = 0, ns_per_px = 1;
  int x0 = 0;        // image column of t0
  int width = 0;     // columns to paint
  int clip_top = 0;  // rows above this are not written (the ruler)
  int lane_height = 0;
  const Highlight* highlight = nullptr;  // dims the rest when not empty
};

class LanePainter {
 public:
  void paint(QImage& img, const LaneFrame& f, const std::vector<LaneJob>& jobs, std::vector<LaneBox>& boxes);

 private:
  struct Scratch {
    ColumnAccum acc;
    std::vector<uint32_t> wide;
    std::vector<QRgb> line;
    std::vector<LaneBox> boxes;
  };
  void paint_one(uchar* bits, qsizetype stride, int height, const LaneFrame& f, const LaneJob& job, Scratch& s);
  std::vector<Scratch> scratch_;
};

}  // namespace gpuscope::gui
