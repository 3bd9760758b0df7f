#include "analyzer/whatif/calibration.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "trace_formats/common/error.h"

namespace gpuscope::analyzer::whatif {

// Curve::at's range takes in points measured within this factor of x.
constexpr double kNeighbourhood = 3;

// Generated at build time from analyzer/whatif/calibration/*.json (CMakeLists.txt).
extern const std::vector<std::pair<std::string, std::string>>& embedded_calibration_files();

double Curve::at(double x, Bound b) const {
  if (points.empty()) return 1;
  if (!(x > 0)) x = points.front()[0];
  auto mid_at = [&](size_t col) {
    if (x <= points.front()[0]) return points.front()[col];
    if (x >= points.back()[0]) return points.back()[col];
    size_t i = 1;
    while (points[i][0] < x) ++i;
    const auto& p = points[i - 1];
    const auto& q = points[i];
    const double t = (std::log(x) - std::log(p[0])) / (std::log(q[0]) - std::log(p[0]));
    return p[col] + t * (q[col] - p[col]);
  };
  if (b == Bound::kMid) return mid_at(1);
  // The range: the measured spread at x, and every point measured within a
  // factor kNeighbourhood of x (work of a similar size but another shape, which
  // a real model's kernels are).
  double v = mid_at(b == Bound::kLo ? 2 : 3);
  const double from = std::min(x, points.back()[0]) / kNeighbourhood, to = std::max(x, points.front()[0]) * kNeighbourhood;
  for (const auto& p : points)
    if (p[0] >= from && p[0] <= to) v = b == Bound::kLo ? std::min(v, p[2]) : std::max(v, p[3]);
  return v;
}

double Calibration::ratio(std::string_view curve, double x, Bound b, double fallback) const {
  auto it = curves.find(curve);
  return it == curves.end() || it->second.points.empty() ? fallback : it->second.at(x, b);
}

double Calibration::cost(std::string_view id, double fallback, Bound b) const {
  auto it = costs.find(id);
  if (it == costs.end()) return fallback;
  return b == Bound::kLo ? it->second.lo : b == Bound::kHi ? it->second.hi : it->second.value;
}

Calibration parse_calibration(std::string_view text, const std::string& name) {
  using nlohmann::json;
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(name + ": not JSON: " + e.what());
  }
  if (!j.is_object() || j.value("schema", "") != kCalibrationSchema)
    throw Error(name + ": not a calibration table (schema must be " + std::string(kCalibrationSchema) + ")");
  Calibration c;
  c.file = name;
  c.device = j.value("device", "");
  c.match = j.value("match", "");
  c.measured = j.value("measured", true);
  c.date = j.value("date", "");
  c.torch = j.value("torch", "");
  if (j.contains("curves") && j["curves"].is_object()) {
    for (auto& [id, v] : j["curves"].items()) {
      Curve curve;
      curve.what = v.value("what", "");
      if (!v.contains("points") || !v["points"].is_array()) throw Error(name + ": curve " + id + " has no points");
      for (const auto& p : v["points"]) {
        if (!p.is_array() || p.size() != 4 || !std::all_of(p.begin(), p.end(), [](const json& x) { return x.is_number(); }))
          throw Error(name + ": curve " + id + ": a point is not [x, ratio, lo, hi]");
        std::array<double, 4> pt{p[0].get<double>(), p[1].get<double>(), p[2].get<double>(), p[3].get<double>()};
        if (!(pt[0] > 0) || !(pt[1] > 0) || !(pt[2] > 0) || !(pt[3] > 0) || pt[2] > pt[1] || pt[1] > pt[3])
          throw Error(name + ": curve " + id + ": a point needs x > 0 and 0 < lo <= ratio <= hi");
        curve.points.push_back(pt);
      }
      if (!std::is_sorted(curve.points.begin(), curve.points.end(),
                          [](const auto& a, const auto& b) { return a[0] < b[0]; }))
        throw Error(name + ": curve " + id + ": points not sorted by x");
      // Equal x would divide by zero in the interpolation: keep the first.
      curve.points.erase(std::unique(curve.points.begin(), curve.points.end(),
                                     [](const auto& a, const auto& b) { return a[0] == b[0]; }),
                         curve.points.end());
      // "use": "median": the ratio does not follow the base duration (a
      // convolution's follows its shape): one flat point, the median ratio,
      // over the whole measured range.
      if (v.value("use", "") == "median" && curve.points.size() > 1) {
        std::vector<double> r;
        double lo = curve.points[0][2], hi = curve.points[0][3];
        for (const auto& pt : curve.points) r.push_back(pt[1]), lo = std::min(lo, pt[2]), hi = std::max(hi, pt[3]);
        std::sort(r.begin(), r.end());
        const double mid = r.size() % 2 ? r[r.size() / 2] : (r[r.size() / 2 - 1] + r[r.size() / 2]) / 2;
        curve.points = {{1, mid, std::min(lo, mid), std::max(hi, mid)}};
      }
      if (!curve.points.empty()) c.curves[id] = std::move(curve);
    }
  }
  if (j.contains("costs") && j["costs"].is_object()) {
    for (auto& [id, v] : j["costs"].items()) {
      if (!v.is_object() || !v.contains("value") || !v["value"].is_number()) continue;
      Cost cost;
      cost.value = v["value"].get<double>();
      cost.lo = v.value("lo", cost.value);
      cost.hi = v.value("hi", cost.value);
      if (!std::isfinite(cost.value) || cost.value < 0) throw Error(name + ": cost " + id + " is not a number >= 0");
      cost.lo = std::min(cost.lo, cost.value);
      cost.hi = std::max(cost.hi, cost.value);
      cost.unit = v.value("unit", "");
      cost.what = v.value("what", "");
      c.costs[id] = std::move(cost);
    }
  }
  return c;
}

const std::vector<Calibration>& calibrations() {
  static const std::vector<Calibration> all = [] {
    std::vector<Calibration> v;
    for (const auto& [name, text] : embedded_calibration_files()) v.push_back(parse_calibration(text, name));
    std::stable_sort(v.begin(), v.end(), [](const Calibration& a, const Calibration& b) { return a.measured > b.measured; });
    return v;
  }();
  return all;
}

const Calibration& calibration_for(std::string_view device_name) {
  const auto& all = calibrations();
  for (const Calibration& c : all)
    if (c.measured && !c.match.empty() && device_name.find(c.match) != std::string_view::npos) return c;
  for (const Calibration& c : all)
    if (!c.measured) return c;
  static const Calibration none{};
  return none;
}

const Calibration& calibration_for(std::string_view device_name, const LocalCalibrations* extra) {
  if (!extra) return calibration_for(device_name);
  if (!extra->forced.empty()) return extra->forced.front();
  const Calibration& built_in = calibration_for(device_name);
  if (built_in.measured || device_name.empty()) return built_in;
  for (const Calibration& c : extra->local)
    if (c.device == device_name) return c;
  for (const Calibration& c : extra->local)
    if (!c.match.empty() && device_name.find(c.match) != std::string_view::npos) return c;
  return built_in;
}

}  // namespace gpuscope::analyzer::whatif
