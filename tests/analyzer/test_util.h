// Helpers shared by the analyzer tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "analyzer/analysis.h"
#include "analyzer/report/report.h"
#include "trace_formats/store/reader.h"
#include "tests/analyzer/scenarios.h"

namespace gpuscope::testing {

inline analyzer::Analysis analyze_path(const std::string& path, const analyzer::Options& opt = {}) {
  store::Reader reader(path);
  return analyzer::analyze(reader, opt);
}

inline analyzer::Analysis analyze_scenario(const std::string& name, bool planted = true,
                                           const analyzer::Options& opt = {}) {
  const std::string path = temp_db(name + (planted ? "" : "-not"));
  write_scenario(name, planted, path);
  return analyze_path(path, opt);
}

inline const analyzer::Finding* find(const analyzer::Analysis& a, const std::string& id) {
  for (const auto& f : a.findings)
    if (f.id == id) return &f;
  return nullptr;
}

// A finding's metric by name; a failure of the calling test when it has none.
inline double metric(const analyzer::Finding& f, const std::string& name) {
  for (const auto& m : f.evidence.metrics)
    if (m.name == name) return m.value;
  ADD_FAILURE() << f.id << " has no metric " << name;
  return -1;
}

inline std::string finding_list(const analyzer::Analysis& a) {
  std::string s;
  for (const auto& f : a.findings) s += f.id + " " + std::to_string(f.saving_pct) + "%; ";
  return s.empty() ? "(none)" : s;
}

}  // namespace gpuscope::testing
