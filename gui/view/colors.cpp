#include "gui/view/colors.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::gui {
namespace {

// Golden-ratio hashing spreads consecutive name ids across the hue range.
double spread(uint32_t id) {
  double x = static_cast<double>(id) * 0.6180339887498949;
  return x - std::floor(x);
}

// Called per pixel column while painting: plain arithmetic, no QColor.
QRgb hsv(double hue_deg, double s, double v) {
  double h = std::fmod(hue_deg + 360.0, 360.0) / 60.0;
  const int i = static_cast<int>(h) % 6;
  const double f = h - std::floor(h);
  const double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r, g, b;
  switch (i) {
    case 0: r = v; g = t; b = p; break;
    case 1: r = q; g = v; b = p; break;
    case 2: r = p; g = v; b = t; break;
    case 3: r = p; g = q; b = v; break;
    case 4: r = t; g = p; b = v; break;
    default: r = v; g = p; b = q; break;
  }
  return qRgb(static_cast<int>(r * 255 + 0.5), static_cast<int>(g * 255 + 0.5),
              static_cast<int>(b * 255 + 0.5));
}

}  // namespace

QRgb event_color(const Event& e) {
  const double h = spread(e.name);
  switch (e.kind) {
    case EventKind::kKernel: return hsv(190 + 110 * h, 0.55, 0.80);
    case EventKind::kMemcpy:
      switch (e.aux) {
        case 1: return hsv(28, 0.80, 0.95);   // HtoD
        case 2: return hsv(8, 0.75, 0.90);    // DtoH
        case 8: return hsv(42, 0.75, 0.90);   // DtoD
        default: return hsv(18, 0.70, 0.85);
      }
    case EventKind::kMemset: return hsv(55, 0.75, 0.90);
    case EventKind::kApiCall: return hsv(250 + 40 * h, 0.22, 0.78);
    case EventKind::kSync: return hsv(0, 0.65, 0.85);
    case EventKind::kOp: return hsv(95 + 70 * h, 0.45, 0.78);
    case EventKind::kDataLoader: return hsv(350, 0.75, 0.90);
    case EventKind::kOptimizer: return hsv(285, 0.45, 0.80);
    case EventKind::kMark: return qRgb(70, 70, 80);
    case EventKind::kTracerOverhead: return qRgb(150, 150, 150);  // the profiler's, not the job's
    case EventKind::kRange:
    case EventKind::kAsyncRange:
      if (e.extra != 0) return e.extra | 0xff000000u;
      return hsv(360 * h, 0.40, 0.88);
    case EventKind::kCount: break;
  }
  return qRgb(128, 128, 128);
}

QRgb kind_legend_color(EventKind k) {
  Event e;
  e.kind = k;
  return event_color(e);
}

QRgb blend(QRgb c, QRgb bg, double a) {
  a = std::clamp(a, 0.0, 1.0);
  auto mix = [a](int x, int y) { return static_cast<int>(x * a + y * (1 - a) + 0.5); };
  return qRgb(mix(qRed(c), qRed(bg)), mix(qGreen(c), qGreen(bg)), mix(qBlue(c), qBlue(bg)));
}

bool is_dark(QRgb c) { return qGray(c) < 128; }

}  // namespace gpuscope::gui
