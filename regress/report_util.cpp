#include "regress/report_util.h"

#include <cmath>

#include "report/format.h"

namespace gpuscope::regress {

const char* verdict_label(Verdict v) {
  switch (v) {
    case Verdict::kRegression: return "REGRESSION";
    case Verdict::kImprovement: return "FASTER";
    case Verdict::kWithinThreshold: return "NO REGRESSION";
    case Verdict::kNoChange: return "NO CHANGE";
  }
  return "NO CHANGE";
}

std::string cause_subject(const Cause& c, const std::string& name) {
  if (c.kind == "breakdown") return "step-time category " + name;
  if (c.kind == "memcpy" || c.kind == "memset") return name;  // the label starts with the kind
  return c.kind + " " + name;
}

std::string metric_change(const MetricChange& m) {
  if (m.unit == "fraction") return report::signed_fixed((m.next - m.base) * 100, 1) + " pts";
  if (m.base == 0) return m.next == 0 ? "0.0 %" : "";
  return report::signed_percent(m.next / m.base - 1);
}

std::string side_ms(const Change& c, bool is_new) {
  const bool absent = is_new ? c.status == Status::kRemoved : c.status == Status::kAdded;
  return absent ? "-" : format_fixed(is_new ? c.new_ms : c.base_ms, 3);
}

std::string share_text(const Change& c) { return c.share ? format_fixed(*c.share * 100, 0) + " %" : ""; }

std::string p_text(const Change& c) { return c.p_value ? report::p_value(*c.p_value) : ""; }

}  // namespace gpuscope::regress
