// The report of an analysis in each format: text (the terminal), JSON (schema
// kReportSchema, docs/report-json.md), Markdown and HTML; and the cross-rank
// report of `gpuscope cluster`.
#pragma once

#include <string>

#include "analyzer/result.h"

namespace gpuscope::analyzer {

std::string to_text(const Analysis& a);
std::string to_json(const Analysis& a);
std::string to_markdown(const Analysis& a);
std::string to_html(const Analysis& a);
// The cross-rank report alone (ranks rank table, cross-rank findings, notes),
// from analyzer/ranks.h's cross_rank_report; a.summary.recording names the inputs.
std::string to_cross_rank_text(const Analysis& a);
std::string to_cross_rank_json(const Analysis& a);
std::string to_cross_rank_markdown(const Analysis& a);

}  // namespace gpuscope::analyzer
