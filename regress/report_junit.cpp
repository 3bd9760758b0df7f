// JUnit XML for CI systems (GitLab, Jenkins, GitHub test-report actions): one
// test case per gate, a <failure> carrying the report when it fails. No
// timestamps or host names, so the same input gives the same file.
#include "regress/diff.h"
#include "report/format.h"

namespace gpuscope::regress {
namespace {

std::string attr(const std::string& name, const std::string& value) {
  return " " + name + "=\"" + html_escape(value, true) + "\"";
}

std::string property(const std::string& name, const std::string& value) {
  return "      <property" + attr("name", name) + attr("value", value) + "/>\n";
}

std::string open_suites(const std::string& suite, size_t tests, size_t failures) {
  const std::string counts = attr("tests", std::to_string(tests)) + attr("failures", std::to_string(failures)) + attr("errors", "0");
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", "gpuscope") + counts + ">\n  <testsuite" +
         attr("name", suite) + counts + attr("skipped", "0") + attr("time", "0") + ">\n";
}

}  // namespace

std::string to_junit(const DiffResult& d) {
  const bool failed = d.verdict == Verdict::kRegression;
  std::string o = open_suites("gpuscope diff", 1, failed ? 1 : 0);
  o += "    <properties>\n" + property("base", d.base.recording) + property("new", d.next.recording) +
       property("verdict", verdict_name(d.verdict)) + property("threshold_pct", format_fixed(d.options.threshold * 100, 2)) +
       property("alpha", format_fixed(d.options.alpha, 4)) + property("shift_pct", format_fixed(d.test.shift * 100, 2)) +
       property("p_slower", report::p_value(d.test.p_slower)) + property("base_step_ms_median", format_fixed(d.base.median_ms, 3)) +
       property("new_step_ms_median", format_fixed(d.next.median_ms, 3)) + "    </properties>\n";
  o += "    <testcase" + attr("classname", "gpuscope.diff") + attr("name", "step time: " + d.next.recording + " vs " + d.base.recording) +
       attr("time", "0") + ">\n";
  // The body repeats the terminal report: CI systems show it under the failed test.
  const std::string body = html_escape(to_text(d));
  if (failed) o += "      <failure" + attr("type", "regression") + attr("message", d.headline) + ">" + body + "</failure>\n";
  else o += "      <system-out>" + body + "</system-out>\n";
  o += "    </testcase>\n  </testsuite>\n</testsuites>\n";
  return o;
}

std::string to_junit(const CheckResult& c) {
  size_t failures = 0;
  for (const auto& k : c.checks) failures += k.pass ? 0 : 1;
  std::string o = open_suites("gpuscope check", c.checks.size(), failures);
  o += "    <properties>\n" + property("recording", c.recording) + property("budget", c.budget) +
       property("steps", std::to_string(c.run.steps)) + property("step_ms_median", format_fixed(c.run.median_ms, 3)) +
       "    </properties>\n";
  for (const auto& k : c.checks) {
    o += "    <testcase" + attr("classname", "gpuscope.check") + attr("name", k.name) + attr("time", "0") + ">\n";
    const std::string text = k.name + ": limit " + k.limit + ", actual " + k.actual + (k.detail.empty() ? "" : "; " + k.detail);
    if (!k.pass) o += "      <failure" + attr("type", "budget") + attr("message", text) + ">" + html_escape(text) + "</failure>\n";
    else o += "      <system-out>" + html_escape(text, true) + "</system-out>\n";
    o += "    </testcase>\n";
  }
  o += "  </testsuite>\n</testsuites>\n";
  return o;
}

}  // namespace gpuscope::regress
