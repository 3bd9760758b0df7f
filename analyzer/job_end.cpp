#include "analyzer/job_end.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include "common/text.h"

namespace gpuscope::analyzer {

bool startup_only(const Summary& s) { return s.job && s.job->unclean() && s.job->steps == 0; }

std::string job_end_line(const Summary& s) {
  if (!s.job) return {};
  std::string line = (s.job->failed() ? "FAILED: " : s.job->stopped() ? "stopped: " : "") + s.job->describe();
  if (startup_only(s)) line += "; the findings describe its start-up only";
  return line;
}

std::string with_job_end(std::string report, std::string_view format, const Summary& s) {
  if (!s.job) return report;
  if (format == "json") {
    using json = nlohmann::ordered_json;
    json doc = json::parse(report, nullptr, false);
    if (doc.is_discarded() || !doc.contains("summary")) return report;
    const store::JobEnd& j = *s.job;
    json job{{"failed", j.failed()},
             {"stopped", j.stopped()},
             {"exit_code", j.exit_code ? json(*j.exit_code) : json(nullptr)},
             {"signal", j.signal.empty() ? json(nullptr) : json(j.signal)},
             {"wall_ms", std::round(static_cast<double>(j.wall_ns) / 1e3) / 1e3},
             {"steps", j.steps},
             {"startup_only", startup_only(s)}};
    json summary{{"job_exit", job}};
    for (auto& [key, value] : doc["summary"].items()) summary[key] = value;
    doc["summary"] = summary;
    return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  }
  const std::string line = job_end_line(s);
  if (format == "text") {
    const size_t eol = report.find('\n');
    return eol == std::string::npos ? report : report.insert(eol + 1, "job: " + plain_text(line) + "\n");
  }
  if (format == "md" || format == "markdown") {
    const size_t para = report.find("\n\n");
    return para == std::string::npos ? report : report.insert(para + 2, "**Job:** " + markdown_escape(line) + "\n\n");
  }
  return report;
}

}  // namespace gpuscope::analyzer
