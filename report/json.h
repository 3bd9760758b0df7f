// The JSON reports' text: nlohmann's ordered objects (keys in the order the
// report sets them), indented by two, invalid UTF-8 in recorded names replaced
// rather than thrown on, one newline at the end.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gpuscope::report {

inline std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpuscope::report
