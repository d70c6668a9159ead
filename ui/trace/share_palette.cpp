#include "ui/trace/share_palette.h"

#include <algorithm>
#include <cmath>

namespace nova::ui {

QColor SharePalette::colour(double share) {
  // sqrt spreads the many small shares apart; the hue runs from blue-grey through amber to red.
  double s = std::sqrt(std::clamp(share, 0.0, 1.0));
  int hue = static_cast<int>(std::lround(210 - 210 * s));
  int sat = static_cast<int>(std::lround(40 + 200 * s));
  return QColor::fromHsv(hue % 360, sat, 235);
}

QHash<int, QColor> SharePalette::forNodes(const AttributionResult& result) {
  QHash<int, QColor> out;
  for (const auto& n : result.nodes) out.insert(n.id, colour(n.share));
  return out;
}

}  // namespace nova::ui
