// What every diff renderer says the same way: the verdict's label, the kernel
// and op that moved most with the step time, a metric's change in words.
#pragma once

#include <string>
#include <vector>

#include "regress/diff.h"

namespace gpuscope::regress {

// "REGRESSION", "FASTER", "NO REGRESSION", "NO CHANGE"
const char* verdict_label(Verdict v);

// "kernel NAME", "step-time breakdown: dataloader"
std::string cause_subject(const Cause& c, const std::string& name);

// "+12.4 %", "+2.5 pts" for fractions, "" when the base is 0.
std::string metric_change(const MetricChange& m);

// "0.400 ms" or "-" for an absent side.
std::string side_ms(const Change& c, bool is_new);

// "83 %" of the step-time change, or "".
std::string share_text(const Change& c);

// "0.003" / "< 0.0001", "" when not tested.
std::string p_text(const Change& c);

}  // namespace gpuscope::regress
