#include "gui/model/findings_source.h"

#ifdef GPUSCOPE_HAVE_ANALYZER
#include "analyzer/analysis.h"
#include "analyzer/report/format.h"
#include "trace_formats/store/reader.h"
#endif

namespace gpuscope::gui {

int64_t rank_in_label(std::string_view label) {
  constexpr std::string_view kPrefix = "rank ";
  if (!label.starts_with(kPrefix)) return -1;
  int64_t rank = 0;
  size_t i = kPrefix.size();
  const size_t digits = i;
  for (; i < label.size() && label[i] >= '0' && label[i] <= '9' && i - digits < 12; ++i) rank = rank * 10 + (label[i] - '0');
  return i > digits && i < label.size() && label[i] == ':' ? rank : -1;
}

#ifdef GPUSCOPE_HAVE_ANALYZER
namespace {

int64_t pid_of_rank(const analyzer::Analysis& a, int64_t rank) {
  for (const auto& r : a.ranks)
    if (r.rank == rank) return r.pid;
  return -1;
}

}  // namespace
#endif

int64_t straggler_rank(const FindingsResult& f) {
  for (const auto& item : f.findings)
    if (item.id == "straggler") return item.rank;
  return -1;
}

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
    for (const auto& f : a.findings) {
      FindingItem item;
      item.id = f.id;
      item.title = f.title;
      item.severity = analyzer::severity_name(f.severity);
      item.summary = f.evidence.summary;
      item.fix = f.fix.text;
      if (!f.fix.code.empty()) item.fix += "\n\n" + f.fix.code;
      // Per step, as the report says it (not the total over the analysed steps).
      item.saving_ns = f.saving_ms_per_step * 1e6;
      item.saving_fraction = f.saving_pct / 100.0;
      // Cross-rank findings name their rank in a metric (docs/rules.md).
      for (const auto& m : f.evidence.metrics)
        if (item.rank < 0 && (m.name == "straggler_rank" || m.name == "last_arrival_rank"))
          item.rank = static_cast<int64_t>(m.value);
      // Whose lanes each range is on. The analyzer says it only in the label
      // ("rank 3: step 15, ..."); a range without one is the finding's rank's,
      // or for a per-process rule the analysed process's.
      for (const auto& r : f.evidence.ranges) {
        EvidenceRange e{r.start_ns, r.end_ns, r.label, rank_in_label(r.label), -1};
        if (e.rank < 0) e.rank = item.rank;
        e.pid = e.rank >= 0 ? pid_of_rank(a, e.rank) : a.summary.pid;
        item.evidence.push_back(std::move(e));
      }
      out.findings.push_back(std::move(item));
    }
    for (const auto& r : a.ranks)
      out.ranks.push_back({r.rank, r.pid, r.host, r.steps, r.step_ms_median, r.step_ms_p95, r.own_ms_median,
                           r.collective_ms_median, r.collective_ms_per_step, r.data_ms_per_step, r.compute_ms_per_step,
                           r.comm_overlap_pct});
    out.pid = a.summary.pid;
    if (!a.steps.empty()) {
      out.analysed_start_ns = a.steps.front().start_ns;
      out.analysed_end_ns = a.steps.back().end_ns;
    }
    if (std::string check = analyzer::report::whatif_check_line(a); !check.empty()) {
      out.plan.push_back(std::move(check));
      for (auto& line : analyzer::report::plan_lines(a)) out.plan.push_back(std::move(line));
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
