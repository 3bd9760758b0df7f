#include "analyzer/job_end.h"

#include "trace_formats/common/text.h"

namespace gpuscope::analyzer {

bool startup_only(const Summary& s) { return s.job && s.job->unclean() && s.job->steps == 0; }

void cap_startup_findings(Analysis& a) {
  if (!startup_only(a.summary)) return;
  for (Finding& f : a.findings) f.severity = Severity::kLow;
}

std::string job_end_line(const Summary& s) {
  if (!s.job) return {};
  std::string line = (s.job->failed() ? "FAILED: " : s.job->stopped() ? "stopped: " : "") + s.job->describe();
  if (startup_only(s)) line += "; the findings describe its start-up only";
  return line;
}

}  // namespace gpuscope::analyzer
