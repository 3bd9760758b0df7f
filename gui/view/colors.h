// Event colors: one hue family per kind (kernels blue-violet, copies orange,
// sets yellow, API calls grey-violet, ops green, ranges by NVTX color or name),
// varied by name so neighbours differ.
#pragma once

#include <QColor>
#include <QRgb>

#include "gui/model/event.h"

namespace gpuscope::gui {

QRgb event_color(const Event& e);
QRgb kind_legend_color(EventKind k);
// `c` blended over `bg` with weight `a` (0..1), opaque.
QRgb blend(QRgb c, QRgb bg, double a);
bool is_dark(QRgb c);

inline constexpr QRgb kBackground = 0xfffafafa;
inline constexpr QRgb kBackgroundAlt = 0xfff1f3f5;
inline constexpr QRgb kHeaderBackground = 0xffe4e7eb;
inline constexpr QRgb kGroupBackground = 0xffd5dae0;

}  // namespace gpuscope::gui
