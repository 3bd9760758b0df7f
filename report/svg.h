// The frame of an inline SVG chart in a report page: the opening tag and the
// labelled grid lines of an axis. No namespace attribute and no script, so the
// page names no URL; the page's style gives the classes "grid" and "axis".
#pragma once

#include <string>

namespace gpuscope::report {

// A chart's size and the margins around its plot area, in pixels.
struct Frame {
  int width = 0, height = 0;
  int left = 0, right = 0, top = 0, bottom = 0;
};

// <svg width height [viewBox] role="img" aria-label>, `label` escaped.
std::string svg_open(const Frame& f, const std::string& label, bool view_box);

// A value axis at the left (analyze's charts): five horizontal grid lines from
// 0 to `max`, labelled at their left, and `unit` at the top-left corner.
std::string y_axis(const Frame& f, double max, const std::string& unit);

// A time axis under the plot (diff's step times): six vertical grid lines from
// `lo` to `hi`, each labelled "<value> <unit>" under it.
std::string x_axis(const Frame& f, double lo, double hi, const std::string& unit);
// Where `v` lies on that axis.
double x_at(const Frame& f, double lo, double hi, double v);

}  // namespace gpuscope::report
