// Search by name: which interned names match a substring or a regular expression.
#pragma once

#include <QString>

#include <vector>

#include "gui/model/timeline_data.h"

namespace gpuscope::gui {

// mask[id] is true when strings[id] matches, case-insensitively. A bad regular
// expression sets `error` and matches nothing.
std::vector<bool> match_names(const StringTable& strings, const QString& pattern, bool regex,
                              QString* error = nullptr);

}  // namespace gpuscope::gui
