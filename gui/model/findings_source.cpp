#include "model/findings_source.h"

#ifdef GPUSCOPE_HAVE_ANALYZER
#include "analyzer/analysis.h"
#include "store/reader.h"
#endif

namespace gpuscope::gui {

bool have_analyzer() {
#ifdef GPUSCOPE_HAVE_ANALYZER
  return true;
#else
  return false;
#endif
}

FindingsResult analyze_findings(const std::string& database) {
  FindingsResult out;
#ifdef GPUSCOPE_HAVE_ANALYZER
  try {
    store::Reader reader(database);
    analyzer::Options options;
    analyzer::Analysis a = analyzer::analyze(reader, options);
    const double steps = a.summary.steps > 0 ? static_cast<double>(a.summary.steps) : 1.0;
    for (const auto& f : a.findings) {
      FindingItem item;
      item.id = f.id;
      item.title = f.title;
      item.severity = analyzer::severity_name(f.severity);
      item.summary = f.evidence.summary;
      item.fix = f.fix.text;
      if (!f.fix.code.empty()) item.fix += "\n\n" + f.fix.code;
      // The analyzer reports per step; the panel shows the total over the analysed steps.
      item.saving_ns = f.saving_ms_per_step * 1e6 * steps;
      item.saving_fraction = f.saving_pct / 100.0;
      for (const auto& r : f.evidence.ranges) item.evidence.emplace_back(r.start_ns, r.end_ns);
      out.findings.push_back(std::move(item));
    }
    if (out.findings.empty()) out.status = "no findings: nothing to fix was detected";
  } catch (const std::exception& e) {
    out.status = std::string("analysis failed: ") + e.what();
  }
#else
  (void)database;
  out.status = "analyzer not built";
#endif
  return out;
}

}  // namespace gpuscope::gui
