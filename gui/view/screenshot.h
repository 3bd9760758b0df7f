// `gpuscope view run.db --screenshot out.png`: load, render offscreen, save, exit.
#pragma once

#include <QSize>
#include <QString>

#include <cstdint>

namespace gpuscope::gui {

struct ScreenshotOptions {
  QString input, output;
  QSize size{1400, 860};
  bool has_range = false;
  int64_t range_start = 0, range_end = 0;  // ns since origin
  bool whole = false;                      // the whole recording (--range all); default: the analysed steps
  bool force = false;                      // overwrite an existing output
  bool timeline_only = false;              // just the timeline widget (tests)
};

// Returns the process exit code: 0, or 2 with `error` set (nothing written).
int take_screenshot(const ScreenshotOptions& options, QString* error);

}  // namespace gpuscope::gui
