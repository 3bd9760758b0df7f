// The steps window of `gpuscope record --steps A-B` (GPUSCOPE_TRACE_STEPS):
// parsed by the CLI, which refuses a bad one, and by the collector, which
// reads the variable. Header-only: the collector links no CLI code.
#pragma once

#include <cstdint>
#include <string>

namespace gpuscope {

// GPUSCOPE_TRACE_STEPS=on-demand (`record --on-demand`): no step is traced
// until `gpuscope trigger` (or gpuscope_capture_start) asks for some.
inline constexpr const char* kOnDemandSteps = "on-demand";

// "A-B" or "A-" (to the end), decimal, A <= B. False, with first and last
// untouched, for anything else.
inline bool parse_steps_window(const std::string& text, uint64_t& first, uint64_t& last) {
  const size_t dash = text.find('-');
  if (dash == std::string::npos || dash == 0) return false;
  const auto number = [](const std::string& s, uint64_t& out) {
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoull(s);
    return true;
  };
  uint64_t a = 0, b = UINT64_MAX;
  if (!number(text.substr(0, dash), a)) return false;
  if (dash + 1 < text.size() && !number(text.substr(dash + 1), b)) return false;
  if (b < a) return false;
  first = a;
  last = b;
  return true;
}

}  // namespace gpuscope
