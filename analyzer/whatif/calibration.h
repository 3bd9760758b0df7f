// The speed table the what-if transforms scale kernels and CPU costs by, one
// per GPU kind, measured by bench/whatif/calibrate.py and committed as JSON
// under analyzer/whatif/calibration/ (embedded at build time). A GPU without a
// measured table gets the generic one, made from peak rates, with wider ranges.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::analyzer::whatif {

inline constexpr const char* kCalibrationSchema = "gpuscope-calibration/1";

// Which end of a measured range to use: the middle, or the ends, for the
// prediction's range.
enum class Bound { kMid, kLo, kHi };

// New time / base time as a function of x (a base kernel's duration in us, or
// a chain length), interpolated in log x and clamped at the ends. The range
// (Bound::kLo, kHi) also takes in every point measured within a factor 3 of x.
struct Curve {
  std::string what;
  std::vector<std::array<double, 4>> points;  // x, ratio, lo, hi; sorted by x
  double at(double x, Bound b = Bound::kMid) const;
};

struct Cost {
  double value = 0, lo = 0, hi = 0;
  std::string unit, what;
};

struct Calibration {
  std::string file;    // e.g. "h200.json"
  // Where a table from outside the build was read (--calibration FILE, or
  // gpuscope calibrate's in the cache); empty for the embedded ones.
  std::string path;
  std::string device;  // the GPU it was measured on
  std::string match;   // the token matched against a recording's device name
  bool measured = false;  // false: the generic peak-rate table
  std::string date, torch;
  std::map<std::string, Curve, std::less<>> curves;
  std::map<std::string, Cost, std::less<>> costs;
  // `fallback` when the table lacks the curve or cost (older tables).
  double ratio(std::string_view curve, double x, Bound b, double fallback) const;
  double cost(std::string_view id, double fallback, Bound b = Bound::kMid) const;
};

// Parses one table; throws Error("<name>: <problem>") on a malformed one.
Calibration parse_calibration(std::string_view json, const std::string& name);
// Every embedded table, measured ones first.
const std::vector<Calibration>& calibrations();
// The measured table whose `match` the device name contains, else the generic one.
const Calibration& calibration_for(std::string_view device_name);

// Tables from outside the build, which the CLI reads and passes in
// (analyzer::Options): `forced` (--calibration FILE) is used for every GPU;
// `local` (what `gpuscope calibrate` wrote into the cache) for a GPU that has
// no embedded measured table.
struct LocalCalibrations {
  std::vector<Calibration> forced;  // at most one
  std::vector<Calibration> local;
};
// As above, with `extra` (may be null) considered: forced, else an embedded
// measured table, else a local one whose device is the name (or whose match it
// contains), else the generic one.
const Calibration& calibration_for(std::string_view device_name, const LocalCalibrations* extra);

}  // namespace gpuscope::analyzer::whatif
