#include "analyzer/job_end.h"

#include "trace_formats/common/text.h"

namespace gpuscope::analyzer {

bool startup_only(const Summary& s) { return s.job && s.job->unclean() && s.job->steps == 0; }

void cap_startup_findings(Analysis& a) {
  if (!startup_only(a.summary)) return;
  for (Finding& f : a.findings) f.severity = Severity::kLow;
}

namespace {

std::string job_text(const store::JobEnd& job) {
  return (job.failed() ? "FAILED: " : job.stopped() ? "stopped: " : "") + job.describe();
}

}  // namespace

std::string job_end_line(const Summary& s) {
  if (!s.job) return {};
  std::string line = job_text(*s.job);
  if (startup_only(s)) line += "; the findings describe its start-up only";
  return line;
}

std::string unclean_job_prefix(const std::optional<store::JobEnd>& job) {
  return job && job->unclean() ? "job " + job_text(*job) + "; " : std::string();
}

}  // namespace gpuscope::analyzer
