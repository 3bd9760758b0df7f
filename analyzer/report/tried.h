// The fixes `gpuscope try --attach` measured on the recorded job (meta
// try_results, schema gpuscope-try/1, docs/try.md), each paired with what
// this analysis's what-if replay predicts for the same fixes, for the text
// and JSON reports of `analyze` ("measured" beside "predicted").
#pragma once

#include <string_view>
#include <vector>

#include "analyzer/result.h"

namespace gpuscope::analyzer {

// Empty when `try_json` is empty; a document that does not parse gives one
// entry whose `why` says so, rather than an error (the recording is fine).
std::vector<TriedFix> tried_fixes(std::string_view try_json, const WhatIf& whatif);

// "amp: measured +12.3 % (+10.1..+14.0 %), predicted +15.0 % (+10.0..+20.0 %): within range".
std::string tried_line(const TriedFix& t);

}  // namespace gpuscope::analyzer
