// Helpers the rules share to build findings: saving and severity, short
// names, tallies of contributors, time ranges.
#pragma once

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyzer/rules/rule.h"
#include "trace_formats/common/text.h"

namespace gpuscope::analyzer {

// Severity from the saving's share of step time.
inline constexpr double kHighSeverityPct = 20.0;
inline constexpr double kMediumSeverityPct = 5.0;

// A finding for `rule` saving `saving_ns` over all analysed steps.
Finding make_finding(const Rule& rule, const Context& ctx, double saving_ns);

// "1.234 ms", "56.7 us", "12.3 %" (of a value already in percent) for evidence
// sentences; other numbers and sizes go through common/text.h.
std::string ms(double ms_value);
std::string ns_text(double ns);
std::string pct(double p);

// A kernel name cut to its readable head: no "void ", no argument list, at most 120 chars.
std::string short_kernel_name(std::string_view name);

// Sums (ns, count) per label and returns the largest as contributors.
class Tally {
 public:
  void add(const std::string& label, int64_t ns, int64_t count = 1, const std::string& detail = {});
  std::vector<Contributor> top(size_t n) const;
  bool empty() const { return items_.empty(); }

 private:
  struct Item {
    int64_t ns = 0, count = 0;
    std::string detail;
  };
  std::unordered_map<std::string, Item> items_;
};

TimeRange gap_range(const Gap& g, const std::string& label);
// The `n` analysed steps with the largest values, as time ranges.
std::vector<TimeRange> worst_steps(const Context& ctx, const std::vector<int64_t>& per_step, size_t n,
                                   const std::string& what);
// The op behind a correlation id, as the user wrote it ("aten::item"), or "".
std::string user_op_name(const Context& ctx, uint32_t corr);
// Input shapes and dtypes of an op, "[[32,128]] float", or "".
std::string op_inputs(const Context& ctx, uint32_t op);

}  // namespace gpuscope::analyzer
