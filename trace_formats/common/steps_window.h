// The steps window of `gpuscope record --steps A-B` (GPUSCOPE_TRACE_STEPS):
// parsed by the CLI, which refuses a bad one, and by the collector, which
// reads the variable. Header-only: the collector links no CLI code.
#pragma once

#include <cstdint>
#include <string>

#include "trace_formats/common/settings.h"

namespace gpuscope {

// GPUSCOPE_TRACE_STEPS=on-demand (`record --on-demand`): no step is traced
// until `gpuscope trigger` (or gpuscope_capture_start) asks for some.
inline constexpr const char* kOnDemandSteps = "on-demand";

// "A-B" or "A-" (to the end), decimal, A <= B: the steps grammar of the
// settings table (settings::StepsWindow), without its `all` and `on-demand`.
// False, with first and last untouched, for anything else.
inline bool parse_steps_window(const std::string& text, uint64_t& first, uint64_t& last) {
  settings::StepsWindow::Value v;
  if (!settings::StepsWindow::parse(text.c_str(), v) || v.mode != settings::StepsWindow::Mode::kWindow) return false;
  first = v.first;
  last = v.last;
  return true;
}

}  // namespace gpuscope
