#include "report/svg.h"

#include "trace_formats/common/text.h"

// Attribute orders differ between the two axes: each is kept as the reports'
// committed pages hold it, so no page changed when the axes moved here.
namespace gpuscope::report {
namespace {

std::string n1(double v) { return format_fixed(v, 1); }

}  // namespace

std::string svg_open(const Frame& f, const std::string& label, bool view_box) {
  const std::string w = std::to_string(f.width), h = std::to_string(f.height);
  return "<svg width=\"" + w + "\" height=\"" + h + "\"" + (view_box ? " viewBox=\"0 0 " + w + " " + h + "\"" : "") +
         " role=\"img\" aria-label=\"" + html_escape(label) + "\">\n";
}

std::string y_axis(const Frame& f, double max, const std::string& unit) {
  std::string s;
  const int plot_h = f.height - f.top - f.bottom;
  for (int i = 0; i <= 4; ++i) {
    const double v = max * i / 4;
    const double y = f.top + plot_h - plot_h * i / 4.0;
    s += "<line x1=\"" + std::to_string(f.left) + "\" x2=\"" + std::to_string(f.width - f.right) + "\" y1=\"" + n1(y) +
         "\" y2=\"" + n1(y) + "\" class=\"grid\"/>";
    s += "<text x=\"" + std::to_string(f.left - 4) + "\" y=\"" + n1(y + 4) + "\" class=\"axis\" text-anchor=\"end\">" +
         format_fixed(v, v >= 10 ? 0 : 1) + "</text>\n";
  }
  s += "<text x=\"4\" y=\"12\" class=\"axis\">" + html_escape(unit) + "</text>\n";
  return s;
}

double x_at(const Frame& f, double lo, double hi, double v) {
  return f.left + (v - lo) / (hi - lo) * (f.width - f.left - f.right);
}

std::string x_axis(const Frame& f, double lo, double hi, const std::string& unit) {
  std::string s;
  const std::string y1 = std::to_string(f.top), y2 = std::to_string(f.height - f.bottom);
  const std::string label_y = std::to_string(f.height - 12);
  for (int i = 0; i <= 5; ++i) {
    const double v = lo + (hi - lo) * i / 5.0, px = x_at(f, lo, hi, v);
    s += "<line class=\"grid\" x1=\"" + n1(px) + "\" y1=\"" + y1 + "\" x2=\"" + n1(px) + "\" y2=\"" + y2 + "\"/>";
    s += "<text class=\"axis\" x=\"" + n1(px) + "\" y=\"" + label_y + "\" text-anchor=\"middle\">" + format_fixed(v, 2) + " " +
         html_escape(unit) + "</text>\n";
  }
  return s;
}

}  // namespace gpuscope::report
