#include "analyzer/report/svg.h"

#include <algorithm>

#include "analyzer/report/format.h"
#include "report/svg.h"

namespace gpuscope::analyzer::report {
namespace {

constexpr int kWidth = 900, kLeft = 60, kRight = 20, kTop = 16, kBottom = 28;
constexpr size_t kMaxBars = 300;

std::string n1(double v) { return format_fixed(v, 1); }

// Every chart is as wide as the page's column; each picks its height.
Frame frame(int height) { return {kWidth, height, kLeft, kRight, kTop, kBottom}; }

std::string open_svg(int height, const std::string& label) { return svg_open(frame(height), label, true); }

// Averages consecutive steps into at most kMaxBars groups.
std::vector<std::pair<std::string, Breakdown>> grouped(const std::vector<StepInfo>& steps) {
  std::vector<std::pair<std::string, Breakdown>> out;
  const size_t per = (steps.size() + kMaxBars - 1) / kMaxBars;
  for (size_t i = 0; i < steps.size(); i += std::max<size_t>(per, 1)) {
    const size_t end = std::min(steps.size(), i + std::max<size_t>(per, 1));
    Breakdown b;
    for (size_t k = i; k < end; ++k)
      for (int c = 0; c < Breakdown::kCategories; ++c) b.at(c) += steps[k].breakdown.get(c) / static_cast<int64_t>(end - i);
    std::string label = "step " + std::to_string(steps[i].number);
    if (end - i > 1) label += "-" + std::to_string(steps[end - 1].number) + " (mean)";
    out.emplace_back(label, b);
  }
  return out;
}

}  // namespace

const char* category_color(int i) {
  static const char* colors[] = {"#4e79a7", "#f28e2b", "#edc948", "#b07aa1", "#76b7b2", "#e15759", "#59a14f", "#bab0ac"};
  return i >= 0 && i < Breakdown::kCategories ? colors[i] : "#999999";
}

std::string step_breakdown_chart(const std::vector<StepInfo>& steps) {
  if (steps.empty()) return {};
  const int height = 260, plot_h = height - kTop - kBottom;
  auto groups = grouped(steps);
  double max = 0;
  for (const auto& [label, b] : groups) max = std::max(max, static_cast<double>(b.total()) / 1e6);
  max = max > 0 ? max * 1.05 : 1;
  std::string s = open_svg(height, "step time breakdown per step") + y_axis(frame(height), max, "ms");
  const double bw = static_cast<double>(kWidth - kLeft - kRight) / static_cast<double>(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [label, b] = groups[i];
    double y = kTop + plot_h;
    const double x = kLeft + bw * static_cast<double>(i);
    for (int c = 0; c < Breakdown::kCategories; ++c) {
      const double h = static_cast<double>(b.get(c)) / 1e6 / max * plot_h;
      if (h <= 0) continue;
      y -= h;
      s += "<rect x=\"" + n1(x) + "\" y=\"" + n1(y) + "\" width=\"" + n1(std::max(bw - 1, 0.5)) + "\" height=\"" + n1(h) +
           "\" fill=\"" + category_color(c) + "\"><title>" + html_escape(label) + ": " + Breakdown::category(c) + " " +
           format_fixed(static_cast<double>(b.get(c)) / 1e6, 3) + " ms</title></rect>";
    }
    s += "\n";
  }
  // Legend under the plot.
  for (int c = 0; c < Breakdown::kCategories; ++c) {
    const int x = kLeft + c * 112;
    s += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(height - 16) + "\" width=\"10\" height=\"10\" fill=\"" +
         category_color(c) + "\"/><text x=\"" + std::to_string(x + 14) + "\" y=\"" + std::to_string(height - 7) +
         "\" class=\"axis\">" + Breakdown::category(c) + "</text>";
  }
  return s + "\n</svg>\n";
}

std::string step_time_chart(const std::vector<StepInfo>& steps, double median_ms) {
  if (steps.empty()) return {};
  const int height = 200, plot_h = height - kTop - kBottom;
  double max = median_ms;
  for (const auto& st : steps) max = std::max(max, static_cast<double>(st.end_ns - st.start_ns) / 1e6);
  max = max > 0 ? max * 1.1 : 1;
  std::string s = open_svg(height, "step times") + y_axis(frame(height), max, "ms");
  const double w = static_cast<double>(kWidth - kLeft - kRight);
  const double dx = steps.size() > 1 ? w / static_cast<double>(steps.size() - 1) : 0;
  std::string pts;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double v = static_cast<double>(steps[i].end_ns - steps[i].start_ns) / 1e6;
    const double x = kLeft + dx * static_cast<double>(i), y = kTop + plot_h - v / max * plot_h;
    pts += n1(x) + "," + n1(y) + " ";
    if (steps[i].outlier)
      s += "<circle cx=\"" + n1(x) + "\" cy=\"" + n1(y) + "\" r=\"3\" class=\"outlier\"><title>step " +
           std::to_string(steps[i].number) + ": " + format_fixed(v, 3) + " ms (outlier)</title></circle>";
  }
  s += "<polyline points=\"" + pts + "\" class=\"series\" stroke=\"#4e79a7\"/>\n";
  const double my = kTop + plot_h - median_ms / max * plot_h;
  s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" + n1(my) + "\" y2=\"" +
       n1(my) + "\" class=\"median\"><title>median " + format_fixed(median_ms, 3) + " ms</title></line>\n";
  s += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(height - 8) + "\" class=\"axis\">step " +
       std::to_string(steps.front().number) + "</text><text x=\"" + std::to_string(kWidth - kRight) + "\" y=\"" +
       std::to_string(height - 8) + "\" class=\"axis\" text-anchor=\"end\">step " + std::to_string(steps.back().number) + "</text>\n";
  return s + "</svg>\n";
}

std::string top_kernels_chart(const std::vector<KernelStat>& kernels) {
  if (kernels.empty()) return {};
  const int row = 22, height = kTop + row * static_cast<int>(kernels.size()) + 8, label_w = 420;
  double max = 0;
  for (const auto& k : kernels) max = std::max(max, static_cast<double>(k.total_ns) / 1e6);
  if (max <= 0) max = 1;
  std::string s = open_svg(height, "top kernels by total time");
  const double w = kWidth - label_w - 90;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto& k = kernels[i];
    const double v = static_cast<double>(k.total_ns) / 1e6;
    const int y = kTop + row * static_cast<int>(i);
    s += "<text x=\"" + std::to_string(label_w - 6) + "\" y=\"" + std::to_string(y + 14) + "\" class=\"label\" text-anchor=\"end\">" +
         html_escape(plain_text(k.name, 60)) + "<title>" + html_escape(k.name) + "</title></text>";
    s += "<rect x=\"" + std::to_string(label_w) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" + n1(std::max(1.0, v / max * w)) +
         "\" height=\"" + std::to_string(row - 6) + "\" fill=\"" + (k.tensor_core ? "#59a14f" : "#4e79a7") + "\"/>";
    s += "<text x=\"" + n1(label_w + v / max * w + 6) + "\" y=\"" + std::to_string(y + 14) + "\" class=\"axis\">" + format_fixed(v, 3) +
         " ms</text>\n";
  }
  return s + "</svg>\n";
}

std::string memory_chart(const MemorySummary& m) {
  if (m.timeline.size() < 2) return {};
  const int height = 220, plot_h = height - kTop - kBottom;
  double max = 0;
  for (const auto& p : m.timeline) max = std::max({max, static_cast<double>(p.allocated), static_cast<double>(p.reserved),
                                                   static_cast<double>(p.device_used)});
  if (max <= 0) return {};
  const bool show_capacity = m.capacity > 0 && static_cast<double>(m.capacity) <= max * 1.25;
  if (show_capacity) max = std::max(max, static_cast<double>(m.capacity));
  max *= 1.05;
  const double gb = 1e9;
  std::string s = open_svg(height, "memory over time") + y_axis(frame(height), max / gb, "GB");
  const double w = kWidth - kLeft - kRight;
  const int64_t t0 = m.timeline.front().ts_ns, t1 = m.timeline.back().ts_ns;
  auto x_of = [&](int64_t t) { return kLeft + (t1 > t0 ? w * static_cast<double>(t - t0) / static_cast<double>(t1 - t0) : 0); };
  auto series = [&](auto get, const char* color, const char* name) {
    std::string pts;
    for (const auto& p : m.timeline) {
      const int64_t v = get(p);
      if (v < 0) continue;
      pts += n1(x_of(p.ts_ns)) + "," + n1(kTop + plot_h - static_cast<double>(v) / max * plot_h) + " ";
    }
    if (!pts.empty())
      s += "<polyline points=\"" + pts + "\" class=\"series\" stroke=\"" + color + "\"><title>" + name + "</title></polyline>\n";
  };
  series([](const MemoryPoint& p) { return p.allocated; }, "#4e79a7", "torch allocated");
  series([](const MemoryPoint& p) { return p.reserved; }, "#f28e2b", "torch reserved");
  series([](const MemoryPoint& p) { return p.device_used; }, "#59a14f", "CUDA memory in use");
  if (show_capacity) {
    const double y = kTop + plot_h - static_cast<double>(m.capacity) / max * plot_h;
    s += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" + n1(y) + "\" y2=\"" +
         n1(y) + "\" class=\"capacity\"><title>device capacity " + format_bytes(static_cast<double>(m.capacity)) + "</title></line>\n";
  }
  const char* names[] = {"allocated", "reserved", "CUDA in use"};
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f"};
  for (int i = 0; i < 3; ++i)
    s += "<rect x=\"" + std::to_string(kLeft + i * 120) + "\" y=\"" + std::to_string(height - 16) +
         "\" width=\"10\" height=\"10\" fill=\"" + colors[i] + "\"/><text x=\"" + std::to_string(kLeft + i * 120 + 14) +
         "\" y=\"" + std::to_string(height - 7) + "\" class=\"axis\">" + names[i] + "</text>";
  return s + "\n</svg>\n";
}

}  // namespace gpuscope::analyzer::report
